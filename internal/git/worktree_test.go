package git

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorktreeLeavesCheckoutAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	co := f.repo.Dir
	// The user is on their own branch with a staged file, an edit and an untracked file.
	f.git(t, co, "checkout", "--quiet", "-b", "feature")
	writeFile(t, filepath.Join(co, "staged.txt"), "staged\n")
	f.git(t, co, "add", "staged.txt")
	writeFile(t, filepath.Join(co, "README.md"), "edited by the user\n")
	writeFile(t, filepath.Join(co, "notes.txt"), "mine\n")
	statusBefore := f.git(t, co, "status", "--porcelain=v1", "--branch")
	branchesBefore := f.git(t, co, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")

	w, err := f.repo.Worktree(ctx, "issue-7", "main")
	if err != nil {
		t.Fatalf("Worktree: %v", err)
	}
	common, err := f.repo.GitCommonDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(common) {
		t.Errorf("GitCommonDir = %q, want an absolute path", common)
	}
	if got, want := canonical(w.Dir), canonical(filepath.Join(f.repo.WorktreeRoot, "issue-7")); got != want {
		t.Errorf("worktree dir = %q, want %q", got, want)
	}
	if got, err := w.HeadSHA(ctx); err != nil || got != f.base {
		t.Errorf("HeadSHA = %q, %v; want %q", got, err, f.base)
	}
	if _, err := f.runner.Run(ctx, w.Dir, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Error("worktree HEAD is on a branch, want detached")
	}
	// The agent works and ralph commits, in the worktree.
	writeFile(t, filepath.Join(w.Dir, "feature.go"), "package x\n")
	if _, _, err := w.CommitAll(ctx, "phase 1", Signature{Name: "ralph", Email: "ralph@example.com"}); err != nil {
		t.Fatal(err)
	}

	if got := f.git(t, co, "status", "--porcelain=v1", "--branch"); got != statusBefore {
		t.Errorf("checkout status changed:\n got %q\nwant %q", got, statusBefore)
	}
	if got := f.git(t, co, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"); got != branchesBefore {
		t.Errorf("local branches changed:\n got %q\nwant %q", got, branchesBefore)
	}
	if b, _ := os.ReadFile(filepath.Join(co, "README.md")); string(b) != "edited by the user\n" {
		t.Errorf("user's README.md = %q, want their edit kept", b)
	}
	if exists(filepath.Join(co, "feature.go")) {
		t.Error("the worktree's file appeared in the user's checkout")
	}
}

func TestWorktreeReusedAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-1", f.base)
	if err != nil {
		t.Fatal(err)
	}
	// The crashed run left every kind of mess behind.
	f.git(t, w.Dir, "checkout", "--quiet", "-b", "agent-branch")
	agentCommit := f.commit(t, w.Dir, "committed.txt", "by the agent\n")
	writeFile(t, filepath.Join(w.Dir, "README.md"), "half edited\n")
	writeFile(t, filepath.Join(w.Dir, "junk", "untracked.txt"), "junk\n")
	writeFile(t, filepath.Join(w.Dir, "debug.log"), "ignored junk\n")
	writeFile(t, filepath.Join(w.Dir, "staged.txt"), "staged\n")
	f.git(t, w.Dir, "add", "staged.txt")
	lock := f.git(t, w.Dir, "rev-parse", "--absolute-git-dir") + "/index.lock"
	writeFile(t, lock, "")

	again, err := f.repo.Worktree(ctx, "issue-1", f.base)
	if err != nil {
		t.Fatalf("Worktree after crash: %v", err)
	}
	if again.Dir != w.Dir {
		t.Errorf("reused dir = %q, want %q", again.Dir, w.Dir)
	}
	if got, _ := again.HeadSHA(ctx); got != f.base {
		t.Errorf("HEAD = %s, want %s", got, f.base)
	}
	if got := f.git(t, w.Dir, "status", "--porcelain=v1", "--ignored", "--untracked-files=all"); got != "" {
		t.Errorf("worktree not clean after reuse:\n%s", got)
	}
	if _, err := f.runner.Run(ctx, w.Dir, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Error("reused worktree is on a branch, want detached")
	}
	// Resetting must not have moved the branch the agent created.
	if got := f.git(t, w.Dir, "rev-parse", "refs/heads/agent-branch"); got != agentCommit {
		t.Errorf("agent-branch = %s, want it left at %s", got, agentCommit)
	}
}

func TestWorktreeRecreated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f *fixture, w *Worktree)
	}{
		{"directory deleted, record stale", func(t *testing.T, f *fixture, w *Worktree) {
			if err := os.RemoveAll(w.Dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"record pruned, junk directory left", func(t *testing.T, f *fixture, w *Worktree) {
			if err := os.Remove(filepath.Join(w.Dir, ".git")); err != nil {
				t.Fatal(err)
			}
			f.git(t, f.repo.Dir, "worktree", "prune")
			writeFile(t, filepath.Join(w.Dir, "junk.txt"), "junk\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t)
			w, err := f.repo.Worktree(ctx, "issue-2", "main")
			if err != nil {
				t.Fatal(err)
			}
			tt.breakIt(t, f, w)

			w, err = f.repo.Worktree(ctx, "issue-2", "main")
			if err != nil {
				t.Fatalf("Worktree: %v", err)
			}
			if got, err := w.HeadSHA(ctx); err != nil || got != f.base {
				t.Errorf("HeadSHA = %q, %v; want %q", got, err, f.base)
			}
			if exists(filepath.Join(w.Dir, "junk.txt")) {
				t.Error("junk.txt survived")
			}
			if !exists(filepath.Join(w.Dir, "README.md")) {
				t.Error("README.md missing from the new worktree")
			}
			if list := f.git(t, f.repo.Dir, "worktree", "list", "--porcelain"); strings.Contains(list, "prunable") {
				t.Errorf("stale worktree record left:\n%s", list)
			}
		})
	}
}

func TestRemoveWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-3", "main")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Dir, "dirty.txt"), "x\n")
	for i := 0; i < 2; i++ { // the second removal finds nothing and is fine
		if err := f.repo.RemoveWorktree(ctx, "issue-3"); err != nil {
			t.Fatalf("RemoveWorktree #%d: %v", i+1, err)
		}
	}
	if exists(w.Dir) {
		t.Error("worktree directory still exists")
	}
	if list := f.git(t, f.repo.Dir, "worktree", "list", "--porcelain"); strings.Contains(list, "issue-3") {
		t.Errorf("worktree still listed:\n%s", list)
	}
}

func TestWorktreeRejectsBadName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, name := range []string{"", "..", "a/b", "../escape"} {
		if _, err := f.repo.Worktree(context.Background(), name, "main"); err == nil {
			t.Errorf("Worktree(%q) succeeded, want an error", name)
		}
	}
}

func TestChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	co := f.repo.Dir
	long := strings.Repeat("a line long enough for rename detection\n", 20)
	writeFile(t, filepath.Join(co, "modified.txt"), "before\n")
	writeFile(t, filepath.Join(co, "deleted.txt"), "doomed\n")
	writeFile(t, filepath.Join(co, "old-name.txt"), long)
	writeFile(t, filepath.Join(co, "becomes-link.txt"), "file\n")
	f.git(t, co, "add", "--all")
	f.git(t, co, "commit", "--quiet", "-m", "base")
	since := f.git(t, co, "rev-parse", "HEAD")

	w, err := f.repo.Worktree(ctx, "issue-4", since)
	if err != nil {
		t.Fatal(err)
	}
	odd := "odd name\twith \"quotes\", é and\nnewline.txt"
	f.commit(t, w.Dir, "committed-by-agent.txt", "agent\n")
	writeFile(t, filepath.Join(w.Dir, "staged.txt"), "staged\n")
	f.git(t, w.Dir, "add", "staged.txt")
	writeFile(t, filepath.Join(w.Dir, "modified.txt"), "after\n")
	if err := os.Remove(filepath.Join(w.Dir, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	// A plain rename, not git mv: the new name is untracked.
	if err := os.Rename(filepath.Join(w.Dir, "old-name.txt"), filepath.Join(w.Dir, "new-name.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Dir, odd), "odd\n")
	writeFile(t, filepath.Join(w.Dir, "dir", "untracked.txt"), "new\n")
	writeFile(t, filepath.Join(w.Dir, "ignored.log"), "not a change\n")
	if err := os.Symlink("../outside", filepath.Join(w.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(w.Dir, "becomes-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(w.Dir, "becomes-link.txt")); err != nil {
		t.Fatal(err)
	}
	indexBefore := f.git(t, w.Dir, "diff", "--cached", "--name-status", since)

	got, err := w.Changes(ctx, since)
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
	want := []Change{
		{Path: "becomes-link.txt", Status: "T", Symlink: true, LinkTarget: "/etc/passwd"},
		{Path: "committed-by-agent.txt", Status: "A"},
		{Path: "deleted.txt", Status: "D"},
		{Path: "dir/untracked.txt", Status: "A"},
		{Path: "link", Status: "A", Symlink: true, LinkTarget: "../outside"},
		{Path: "modified.txt", Status: "M"},
		{Path: "new-name.txt", OldPath: "old-name.txt", Status: "R"},
		{Path: odd, Status: "A"},
		{Path: "staged.txt", Status: "A"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes mismatch (-want +got):\n%s", diff)
	}
	if after := f.git(t, w.Dir, "diff", "--cached", "--name-status", since); after != indexBefore {
		t.Errorf("Changes altered the worktree's index:\n got %q\nwant %q", after, indexBefore)
	}
}

func TestChangesNone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-5", "main")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Dir, "only.log"), "ignored\n")
	got, err := w.Changes(ctx, f.base)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("Changes = %v, want none", got)
	}
}

func TestCommitAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-6", "main")
	if err != nil {
		t.Fatal(err)
	}
	author := Signature{Name: "ralph bot", Email: "ralph@example.org"}

	sha, committed, err := w.CommitAll(ctx, "nothing", author)
	if err != nil || committed || sha != f.base {
		t.Errorf("CommitAll with no changes = %q, %v, %v; want %q, false, nil", sha, committed, err, f.base)
	}

	writeFile(t, filepath.Join(w.Dir, "new.txt"), "new\n")
	if err := os.Remove(filepath.Join(w.Dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	msg := "Phase 1 of 2: #6 Title\n\nbody"
	sha, committed, err = w.CommitAll(ctx, msg, author)
	if err != nil || !committed {
		t.Fatalf("CommitAll = %q, %v, %v; want a commit", sha, committed, err)
	}
	if head, _ := w.HeadSHA(ctx); sha != head || sha == f.base {
		t.Errorf("CommitAll sha = %s, HEAD = %s, base = %s", sha, head, f.base)
	}
	if got, want := f.git(t, w.Dir, "log", "-1", "--format=%an|%ae|%cn|%ce|%B"), "ralph bot|ralph@example.org|ralph bot|ralph@example.org|"+msg; got != want {
		t.Errorf("commit = %q, want %q", got, want)
	}
	if got := f.git(t, w.Dir, "show", "--name-status", "--format=", "HEAD"); got != "D\tREADME.md\nA\tnew.txt" {
		t.Errorf("commit content = %q", got)
	}
	if out, err := f.runner.Run(ctx, w.Dir, nil, "config", "--local", "--get-regexp", "^user\\."); err == nil {
		t.Errorf("identity persisted in config: %s", out)
	}
	if got := f.git(t, w.Dir, "status", "--porcelain"); got != "" {
		t.Errorf("worktree not clean after commit: %q", got)
	}
	sha2, committed, err := w.CommitAll(ctx, "again", author)
	if err != nil || committed || sha2 != sha {
		t.Errorf("second CommitAll = %q, %v, %v; want %q, false, nil", sha2, committed, err, sha)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-8", "main")
	if err != nil {
		t.Fatal(err)
	}
	f.commit(t, w.Dir, "plan.md", "# Plan\n")
	f.commit(t, w.Dir, "code.go", "package code\n")

	diff, err := w.Diff(ctx, f.base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+++ b/plan.md", "+# Plan", "+++ b/code.go", "+package code"} {
		if !strings.Contains(diff, want) {
			t.Errorf("Diff lacks %q:\n%s", want, diff)
		}
	}
}

func TestParseRawRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"garbage\x00", ":100644 100644 a b M\x00", ":100644 100644 a b R100\x00old\x00"} {
		if got, err := parseRaw([]byte(in)); err == nil {
			t.Errorf("parseRaw(%q) = %v, want an error", in, got)
		}
	}
}

// TestDefaultWorktreeRoot: by default worktrees live outside the checkout and outside .git (agent CLIs
// refuse to edit files below a .git directory), in a directory of the repository's own.
func TestDefaultWorktreeRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r := &Repo{Dir: f.repo.Dir, Runner: f.runner}
	root, err := r.worktreeRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := r.worktreeRoot(ctx)
	common, _ := r.GitCommonDir(ctx)
	if root != again || strings.Contains(root, string(filepath.Separator)+".git"+string(filepath.Separator)) ||
		strings.HasPrefix(root, filepath.Dir(common)) || !strings.Contains(filepath.Base(root), "checkout-") {
		t.Errorf("default worktree root = %q (checkout %s)", root, filepath.Dir(common))
	}
	other := newFixture(t)
	if o, _ := (&Repo{Dir: other.repo.Dir, Runner: other.runner}).worktreeRoot(ctx); o == root {
		t.Errorf("two repositories share the worktree root %q", root)
	}
}
