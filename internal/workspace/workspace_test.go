package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ralph-dev/gh-ralph/internal/git"
)

// TestCommitDocument: the commit holds the document ralph read and nothing else the agent wrote, and
// Committed reads it back from ralph's repository, whatever the agent does to its copy afterwards.
func TestCommitDocument(t *testing.T) {
	t.Parallel()
	for _, owner := range owners() {
		t.Run(ownerName(owner), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, owner)
			const branch = "ralph/issue-12"
			w := f.prepare(t, 12, branch)
			if err := w.Clear("docs/plan.md"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(w.Dir, "docs", "plan.md"), "the plan\n")
			writeFile(t, filepath.Join(w.Dir, "other.txt"), "not part of it\n")
			writeFile(t, filepath.Join(w.Dir, "README.md"), "changed too\n")
			f.asAgent(t, w)
			doc, err := w.Document("docs/plan.md")
			if err != nil {
				t.Fatal(err)
			}
			sha, err := w.CommitDocument(ctx, "docs/plan.md", doc, "plan\n\nRalph-Step: plan/1", sig)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := f.store.Repo().Changes(ctx, w.Start, sha)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]git.Change{{Path: "docs/plan.md", Status: "A", OldMode: "000000", NewMode: "100644"}}, changes,
				cmpopts.IgnoreFields(git.Change{}, "OldSHA", "NewSHA")); diff != "" {
				t.Errorf("the commit's change (-want +got):\n%s", diff)
			}
			if w.Built() != sha {
				t.Errorf("Built = %q, want %q", w.Built(), sha)
			}

			// The agent rewrites the document after ralph read it.
			writeFile(t, filepath.Join(w.Dir, "docs", "plan.md"), "a different plan\n")
			for rel, want := range map[string]string{"docs/plan.md": "the plan\n", "README.md": "hello\n", "docs/none.md": "", "": ""} {
				if got, err := w.Committed(ctx, rel); err != nil || got != want {
					t.Errorf("Committed(%q) = %q, %v; want %q", rel, got, err, want)
				}
			}
			// What is committed is the content ralph passes, not the file.
			again, err := w.CommitDocument(ctx, "docs/plan.md", []byte("checked\n"), "plan again", sig)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.ralph(t, "show", again+":docs/plan.md"); got != "checked" {
				t.Errorf("committed document = %q, want the content ralph passed", got)
			}
			if got := f.ralph(t, "rev-parse", again+"^"); got != sha {
				t.Errorf("the second document's parent = %s, want %s", got, sha)
			}

			_, err = w.CommitDocument(ctx, ".github/workflows/plan.yml", []byte("on: push\n"), "x", sig)
			if got := refused(err); !strings.Contains(got, ".github/workflows/plan.yml") {
				t.Errorf("CommitDocument to a protected path = %v, want a refusal", err)
			}
			if w.Built() != again {
				t.Errorf("Built after a refusal = %q, want %q", w.Built(), again)
			}

			if err := w.Push(ctx); err != nil {
				t.Fatal(err)
			}
			if got := f.remoteSHA(t, branch); got != again {
				t.Errorf("remote = %q, want %q", got, again)
			}
			diff, err := w.Diff(ctx)
			if err != nil || !strings.Contains(diff, "+checked") || strings.Contains(diff, "other.txt") {
				t.Errorf("Diff = %q, %v", diff, err)
			}
		})
	}
}

// TestPrepareExistingBranch: a step on an existing branch starts at its tip and pushes only if the branch
// has not moved since.
func TestPrepareExistingBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Owner{})
	const branch = "ralph/issue-13"
	tip := f.pushOther(t, branch, "", "earlier.txt", "an earlier step\n")
	w := f.prepare(t, 13, branch)
	if w.Start != tip || w.RemoteOld != tip || w.Base != f.base || w.Branch != branch {
		t.Errorf("Prepare = Start %s, RemoteOld %s, Base %s; want %s, %s, %s", w.Start, w.RemoteOld, w.Base, tip, tip, f.base)
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "earlier.txt")); err != nil || string(b) != "an earlier step\n" {
		t.Errorf("the copy lacks the branch's file: %q, %v", b, err)
	}
	if got := f.git(t, w.Dir, "rev-parse", "HEAD"); got != tip {
		t.Errorf("the copy's HEAD = %s, want %s", got, tip)
	}
	if got := f.git(t, w.Dir, "status", "--porcelain"); got != "" {
		t.Errorf("the copy's status = %q, want clean", got)
	}
	if w.Built() != "" {
		t.Errorf("Built before any commit = %q", w.Built())
	}
	if err := w.Push(ctx); err != nil {
		t.Errorf("Push with nothing built = %v", err)
	}

	// Someone else moves the branch while the agent works.
	moved := f.pushOther(t, branch, branch, "theirs.txt", "theirs\n")
	writeFile(t, filepath.Join(w.Dir, "mine.txt"), "mine\n")
	if _, err := w.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	sha, err := w.Commit(ctx, "mine", sig)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ralph(t, "rev-parse", sha+"^"); got != tip {
		t.Errorf("parent = %s, want the tip %s", got, tip)
	}
	err = w.Push(ctx)
	var rejected *git.PushRejectedError
	if !errors.As(err, &rejected) {
		t.Errorf("Push onto a moved branch = %v, want a *git.PushRejectedError", err)
	}
	if got := f.remoteSHA(t, branch); got != moved {
		t.Errorf("remote = %s, want it left at %s", got, moved)
	}
	if w.Built() != sha || w.RemoteOld != tip {
		t.Errorf("after a rejected push: Built %q, RemoteOld %q", w.Built(), w.RemoteOld)
	}
}

func TestPrepareNewBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Owner{})
	const branch = "ralph/issue-14"
	w := f.prepare(t, 14, branch)
	if w.Start != f.base || w.RemoteOld != "" || w.Base != f.base {
		t.Errorf("Prepare = Start %s, RemoteOld %q, Base %s; want %s, \"\", %s", w.Start, w.RemoteOld, w.Base, f.base, f.base)
	}
	for _, d := range w.Writable() {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	writeFile(t, filepath.Join(w.Dir, "a.txt"), "a\n")
	if _, err := w.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	sha, err := w.Commit(ctx, "a", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.remoteSHA(t, branch); got != sha {
		t.Errorf("remote = %q, want %q", got, sha)
	}
	if w.RemoteOld != sha || w.Built() != "" {
		t.Errorf("after the push: RemoteOld %q, Built %q", w.RemoteOld, w.Built())
	}
	if err := w.Push(ctx); err != nil {
		t.Errorf("a second Push = %v", err)
	}

	if _, err := f.store.Prepare(ctx, 15, "ralph/issue-15", "no-such-base"); err == nil {
		t.Error("Prepare on a missing base succeeded")
	}
	// A second Prepare of the same issue starts afresh: nothing of the first copy is left.
	again := f.prepare(t, 14, branch)
	if again.Start != sha || again.RemoteOld != sha {
		t.Errorf("again: Start %s, RemoteOld %s; want %s", again.Start, again.RemoteOld, sha)
	}
}

// TestClose removes the agent area, even where the agent took away its own write permission.
func TestClose(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	w := f.prepare(t, 16, "ralph/issue-16")
	locked := filepath.Join(w.Dir, "locked")
	writeFile(t, filepath.Join(locked, "inner", "x.txt"), "x\n")
	for _, d := range []string{filepath.Join(locked, "inner"), locked, w.Home} {
		if err := os.Chmod(d, 0o500); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(w.Dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent area is still there: %v", err)
	}
	if _, err := os.Lstat(w.index); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ralph's index of the area is still there: %v", err)
	}
}

// TestOpenFromCheckout: with a checkout as the source, the remote is its origin.
func TestOpenFromCheckout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	checkout := filepath.Join(f.root, "checkout")
	f.git(t, "", "clone", "--quiet", f.origin, checkout)
	s := f.open(t, Options{GitDir: filepath.Join(f.root, "r2.git"), Agents: filepath.Join(f.root, "a2"), Source: checkout})
	if s.Repo().URL != f.origin {
		t.Errorf("URL = %q, want %q", s.Repo().URL, f.origin)
	}
	w, err := s.Prepare(context.Background(), 17, "ralph/issue-17", "main")
	if err != nil {
		t.Fatal(err)
	}
	if w.Base != f.base {
		t.Errorf("Base = %s, want %s", w.Base, f.base)
	}
}

// TestRelativePaths: a Store opened with relative directories must still never let git resolve its
// repository or index relative to the agent's copy (where ralph runs git). Not parallel: it changes the
// working directory.
func TestRelativePaths(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Owner{})
	t.Chdir(f.root)
	s := f.open(t, Options{GitDir: "rel.git", Agents: "rel-agents"})
	w, err := s.Prepare(ctx, 18, "ralph/issue-18", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(w.Dir) || !filepath.IsAbs(s.Repo().GitDir) {
		t.Errorf("Dir %q, GitDir %q: want absolute", w.Dir, s.Repo().GitDir)
	}
	writeFile(t, filepath.Join(w.Dir, "a.txt"), "a\n")
	if _, err := w.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	sha, err := w.Commit(ctx, "a", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.remoteSHA(t, "ralph/issue-18"); got != sha {
		t.Errorf("remote = %q, want %q", got, sha)
	}
}
