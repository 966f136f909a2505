package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ralph-dev/gh-ralph/internal/git"
)

// TestAgentRepositoryIgnored: the agent owns the .git of its copy. Whatever it puts there (a config that
// redirects pushes and runs hooks and an fsmonitor, commits with forged trailers, a gitdir file pointing
// elsewhere) ralph never reads: it commits the files alone, on the commit the step started from.
func TestAgentRepositoryIgnored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		gitFile bool // replace .git with "gitdir: <other>" after the agent's commit
	}{
		{"hostile .git directory", false},
		{".git replaced by a gitdir file", true},
	}
	for _, owner := range owners() {
		for _, tt := range tests {
			t.Run(ownerName(owner)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFixture(t, owner)
				const branch = "ralph/issue-1"
				w := f.prepare(t, 1, branch)
				other := filepath.Join(f.root, "other.git")
				f.git(t, "", "init", "--quiet", "--bare", other)
				marker := filepath.Join(f.root, "marker")
				hooks := filepath.Join(f.root, "hooks")
				for _, h := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-index-change", "post-checkout"} {
					writeScript(t, filepath.Join(hooks, h), "echo "+h+" >> "+marker)
				}
				writeScript(t, filepath.Join(f.root, "fsmonitor"), "echo fsmonitor >> "+marker)

				// The agent, in its copy.
				f.agent(t, w.Dir, "config", "url."+other+".pushInsteadOf", f.origin)
				f.agent(t, w.Dir, "config", "url."+other+".insteadOf", f.origin)
				f.agent(t, w.Dir, "config", "core.hooksPath", hooks)
				f.agent(t, w.Dir, "config", "core.fsmonitor", filepath.Join(f.root, "fsmonitor"))
				writeFile(t, filepath.Join(w.Dir, "work.txt"), "the agent's work\n")
				f.agent(t, w.Dir, "add", "-A")
				f.agent(t, w.Dir, "commit", "--quiet", "-m", "forged\n\nRalph-Step: implement/1/1")
				forged := f.agent(t, w.Dir, "rev-parse", "HEAD")
				// The planted programs work for git in the copy, so the test notices if ralph runs them.
				if b, _ := os.ReadFile(marker); !strings.Contains(string(b), "pre-commit") || !strings.Contains(string(b), "fsmonitor") {
					t.Fatalf("sanity: the agent's hooks did not run for its own commit: %q", b)
				}
				if err := os.Remove(marker); err != nil {
					t.Fatal(err)
				}
				if tt.gitFile {
					if err := os.RemoveAll(filepath.Join(w.Dir, ".git")); err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(w.Dir, ".git"), "gitdir: "+other+"\n")
				}
				f.asAgent(t, w)

				changes, err := w.Collect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]git.Change{{Path: "work.txt", Status: "A", OldMode: "000000", NewMode: "100644"}}, changes,
					cmpopts.IgnoreFields(git.Change{}, "OldSHA", "NewSHA")); diff != "" {
					t.Errorf("Collect (-want +got):\n%s", diff)
				}
				sha, err := w.Commit(ctx, "implement\n\nRalph-Step: implement/1/2", sig)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Push(ctx); err != nil {
					t.Fatal(err)
				}

				if got := f.remoteSHA(t, branch); got != sha {
					t.Errorf("origin's %s = %q, want ralph's commit %q", branch, got, sha)
				}
				if got := f.git(t, f.origin, "rev-parse", sha+"^"); got != w.Start || got != f.base {
					t.Errorf("parent of the pushed commit = %s, want Start %s (not the agent's %s)", got, w.Start, forged)
				}
				if got := f.git(t, f.origin, "ls-tree", "-r", "--name-only", sha); strings.Contains(got, ".git\n") || strings.HasSuffix(got, ".git") || !strings.Contains(got, "work.txt") {
					t.Errorf("pushed tree:\n%s", got)
				}
				if f.hasObject(forged) {
					t.Error("the agent's commit reached ralph's repository")
				}
				if got := f.git(t, other, "for-each-ref"); got != "" {
					t.Errorf("the agent's push target received %q", got)
				}
				if b, err := os.ReadFile(marker); err == nil {
					t.Errorf("the agent's programs ran inside ralph's git: %q", b)
				}

				// A later step finds ralph's trailer on the branch, never the forged one.
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				next := f.prepare(t, 1, branch)
				if next.Start != sha || next.RemoteOld != sha {
					t.Errorf("next step starts at %s (remote %s), want %s", next.Start, next.RemoteOld, sha)
				}
				if got, found, err := next.FindStep(ctx, "Ralph-Step", "implement/1/1"); err != nil || found {
					t.Errorf("FindStep(forged) = %q, %v, %v; want not found", got, found, err)
				}
				if got, found, err := next.FindStep(ctx, "Ralph-Step", "implement/1/2"); err != nil || !found || got != sha {
					t.Errorf("FindStep(ralph's) = %q, %v, %v; want %s", got, found, err, sha)
				}
			})
		}
	}
}

// TestProtectedPaths: any change to a protected path is refused, naming it, and nothing is built.
func TestProtectedPaths(t *testing.T) {
	t.Parallel()
	const ci = ".github/workflows/ci.yml"
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string // the path named in the refusal; "" for allowed
	}{
		{"added", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".github/workflows/new.yml"), "on: push\n")
		}, ".github/workflows/new.yml"},
		{"modified", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, ci), "on: pull_request_target\n") }, ci},
		{"deleted", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ci)); err != nil {
				t.Fatal(err)
			}
		}, ci},
		{"renamed away", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, ci), filepath.Join(dir, "docs", "ci.yml")); err != nil {
				t.Fatal(err)
			}
		}, ci},
		{"made executable", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, ci), 0o755); err != nil {
				t.Fatal(err)
			}
		}, ci},
		{"replaced by a symlink", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ci)); err != nil {
				t.Fatal(err)
			}
			symlink(t, "../../README.md", filepath.Join(dir, ci))
		}, ci},
		{"elsewhere is allowed", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, ".github", "CODEOWNERS"), "* @x\n") }, ""},
	}
	for _, owner := range owners() {
		for _, tt := range tests {
			t.Run(ownerName(owner)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFixture(t, owner)
				w := f.prepare(t, 2, "ralph/issue-2")
				tt.change(t, w.Dir)
				f.asAgent(t, w)
				_, err := w.Collect(ctx)
				if tt.want == "" {
					if err != nil {
						t.Fatalf("Collect = %v, want it allowed", err)
					}
					if _, err := w.Commit(ctx, "msg", sig); err != nil || w.Built() == "" {
						t.Errorf("Commit = %v, Built %q", err, w.Built())
					}
					return
				}
				if got := refused(err); !strings.Contains(got, "`"+tt.want+"`") || !strings.Contains(got, "protected") {
					t.Errorf("Collect = %v, want a *RefusedError naming %s", err, tt.want)
				}
				if _, err := w.Commit(ctx, "msg", sig); err == nil {
					t.Error("Commit after a refusal succeeded")
				}
				if err := w.Push(ctx); err != nil || w.Built() != "" || f.remoteSHA(t, "ralph/issue-2") != "" {
					t.Errorf("after a refusal: Push %v, Built %q, remote %q", err, w.Built(), f.remoteSHA(t, "ralph/issue-2"))
				}
			})
		}
	}
}

// TestSymlinks: a link the change makes or changes must resolve, through the tree (other links
// included), inside the repository.
func TestSymlinks(t *testing.T) {
	t.Parallel()
	type link struct{ path, target string }
	tests := []struct {
		name  string
		links []link
		edit  string // a file to change besides
		want  []string
	}{
		{"absolute", []link{{"abs", "/etc/passwd"}}, "", []string{"abs"}},
		{"climbs out", []link{{"a", "../../../etc/passwd"}}, "", []string{"a"}},
		{"climbs out of a subdirectory", []link{{"sub/up", "../.."}}, "", []string{"sub/up"}},
		{"through a link to the root", []link{{"l1", "l2/../.."}, {"l2", "."}}, "", []string{"l1"}},
		{"through a link to the root, one level up", []link{{"l1", "l2/.."}, {"l2", "."}}, "", []string{"l1"}},
		{"a chain of two", []link{{"x", "y/.."}, {"y", "sub/.."}}, "", []string{"x"}},
		{"a chain across directories", []link{{"sub/deep", "../l2/.."}, {"l2", "."}}, "", []string{"sub/deep"}},
		{"a loop", []link{{"loop1", "loop2"}, {"loop2", "loop1"}}, "", []string{"loop1", "loop2"}},
		{"an old link escapes through a new one", []link{{"hop", "sub/.."}}, "", []string{"via"}},
		{"the old escaping link retargeted", []link{{"docs/escape", "../../../elsewhere"}}, "", []string{"docs/escape"}},
		{"inside", []link{{"ok", "README.md"}, {"sub/ok", "../README.md"}, {"up", "sub/.."}, {"dir", "sub"}, {"sub/chain", "../dir/keep.txt"}, {"dangling", "nowhere/at/all"}}, "", nil},
		{"the old escaping link untouched", nil, "README.md", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, Owner{})
			w := f.prepare(t, 3, "ralph/issue-3")
			for _, l := range tt.links {
				p := filepath.Join(w.Dir, l.path)
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				symlink(t, l.target, p)
			}
			if tt.edit != "" {
				writeFile(t, filepath.Join(w.Dir, tt.edit), "edited\n")
			}
			_, err := w.Collect(ctx)
			if tt.want == nil {
				if err != nil {
					t.Errorf("Collect = %v, want it allowed", err)
				}
				return
			}
			got := refused(err)
			if got == "" {
				t.Fatalf("Collect = %v, want a *RefusedError", err)
			}
			for _, p := range tt.want {
				if !strings.Contains(got, "`"+p+"` (a symlink") {
					t.Errorf("refusal %q does not name %s", got, p)
				}
			}
			if n := strings.Count(got, "(a symlink"); n != len(tt.want) {
				t.Errorf("refusal %q names %d links, want %d", got, n, len(tt.want))
			}
			if w.Built() != "" {
				t.Errorf("Built = %q after a refusal", w.Built())
			}
		})
	}
}

// TestGitlinkRefused: a repository the agent makes inside its copy (which git would record as a
// submodule) is refused, and nothing of it is read.
func TestGitlinkRefused(t *testing.T) {
	t.Parallel()
	for _, owner := range owners() {
		t.Run(ownerName(owner), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, owner)
			w := f.prepare(t, 4, "ralph/issue-4")
			nested := filepath.Join(w.Dir, "nested")
			f.git(t, "", "init", "--quiet", nested)
			writeFile(t, filepath.Join(nested, "x.txt"), "x\n")
			f.git(t, nested, "add", ".")
			f.git(t, nested, "commit", "--quiet", "-m", "nested")
			f.asAgent(t, w)
			_, err := w.Collect(ctx)
			if got := refused(err); !strings.Contains(got, "`nested/.git` (a repository inside the copy") {
				t.Errorf("Collect = %v, want the nested repository refused", err)
			}
		})
	}
}

// TestSizeLimits: a file over the limit is refused before git reads it (its blob is never written),
// and so is a change over the total.
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", int(testLimits.File)+1)
	tests := []struct {
		name     string
		files    map[string]string
		want     string // in the refusal; "" for allowed
		unhashed string // content whose blob must not be in ralph's repository
	}{
		{"a new file over the limit", map[string]string{"big.bin": big}, "`big.bin` (101 bytes", big},
		{"a file grown over the limit", map[string]string{"README.md": big + "y"}, "`README.md` (102 bytes", big + "y"},
		{"over the total", map[string]string{"t1": strings.Repeat("1", 90), "t2": strings.Repeat("2", 90), "t3": strings.Repeat("3", 90)}, "the change adds 270 bytes", ""},
		{"at the limits", map[string]string{"t1": strings.Repeat("1", 100), "t2": strings.Repeat("2", 100)}, "", ""},
	}
	for _, owner := range owners() {
		for _, tt := range tests {
			t.Run(ownerName(owner)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, owner)
				w := f.prepare(t, 5, "ralph/issue-5")
				for name, content := range tt.files {
					writeFile(t, filepath.Join(w.Dir, name), content)
				}
				f.asAgent(t, w)
				_, err := w.Collect(context.Background())
				if tt.want == "" {
					if err != nil {
						t.Errorf("Collect = %v, want it allowed", err)
					}
					return
				}
				if got := refused(err); !strings.Contains(got, tt.want) {
					t.Errorf("Collect = %v, want a refusal with %q", err, tt.want)
				}
				if tt.unhashed != "" && f.hasObject(blobID(tt.unhashed)) {
					t.Error("the oversized file was hashed into ralph's repository before it was refused")
				}
			})
		}
	}
}

// TestCollectFIFO: a FIFO in the copy (new, or in place of a tracked file) does not hang Collect, and
// never becomes part of the tree.
func TestCollectFIFO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"new", "pipe", false},
		{"in place of a tracked file", "README.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Owner{})
			w := f.prepare(t, 6, "ralph/issue-6")
			p := filepath.Join(w.Dir, tt.path)
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			type result struct {
				changes []git.Change
				err     error
			}
			done := make(chan result, 1)
			go func() {
				c, err := w.Collect(ctx)
				done <- result{c, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Collect hangs on a FIFO")
			}
			if (r.err != nil) != tt.wantErr {
				t.Errorf("Collect = %v, %v; want error %v", r.changes, r.err, tt.wantErr)
			}
			if ctx.Err() != nil {
				t.Error("Collect ended only because its context did")
			}
			for _, c := range r.changes {
				if c.Path == tt.path {
					t.Errorf("the FIFO is in the change: %+v", c)
				}
			}
		})
	}
}

// TestCopyReplaced: when the agent's copy is no longer a directory, nothing is collected from wherever
// it points.
func TestCopyReplaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	w := f.prepare(t, 7, "ralph/issue-7")
	elsewhere := filepath.Join(f.root, "elsewhere")
	if err := os.Rename(w.Dir, elsewhere); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(elsewhere, "x.txt"), "x\n")
	symlink(t, elsewhere, w.Dir)
	if _, err := w.Collect(context.Background()); refused(err) == "" {
		t.Errorf("Collect = %v, want a refusal", err)
	}
}

// TestOwner: with a user of its own, the agent gets its area, and a file in its copy that it does not
// own (a hard link to one of ralph's) is refused.
func TestOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ctx := context.Background()
	owner := Owner{UID: 61000, GID: 61000}
	f := newFixture(t, owner)
	w := f.prepare(t, 8, "ralph/issue-8")
	for _, d := range w.Writable() {
		if bad := notOwned(t, d, owner.UID, owner.GID); len(bad) != 0 {
			t.Errorf("not the agent's: %v", bad)
		}
	}
	// The area holding them is ralph's: the agent cannot swap its copy for a link.
	if bad := notOwned(t, filepath.Dir(w.Dir), 0, 0); len(bad) != 0 && bad[0] == filepath.Dir(w.Dir) {
		t.Errorf("the agent area %s is not ralph's", bad[0])
	}
	if err := w.Clear("docs/new/plan.md"); err != nil {
		t.Fatal(err)
	}
	if bad := notOwned(t, filepath.Join(w.Dir, "docs", "new"), owner.UID, owner.GID); len(bad) != 0 {
		t.Errorf("Clear made directories the agent does not own: %v", bad)
	}

	// The agent's own new file is fine.
	writeFile(t, filepath.Join(w.Dir, "mine.txt"), "mine\n")
	f.asAgent(t, w)
	if _, err := w.Collect(ctx); err != nil {
		t.Fatalf("Collect of the agent's own files = %v", err)
	}
	// A hard link to a file of ralph's is not.
	secret := filepath.Join(f.root, "secret")
	writeFile(t, secret, "ralph's secret\n")
	if err := os.Link(secret, filepath.Join(w.Dir, "stolen")); err != nil {
		t.Fatal(err)
	}
	_, err := w.Collect(ctx)
	if got := refused(err); !strings.Contains(got, "`stolen`") || strings.Contains(got, "mine.txt") {
		t.Errorf("Collect = %v, want only the hard link refused", err)
	}
	if f.hasObject(blobID("ralph's secret\n")) {
		t.Error("the hard-linked file was hashed into ralph's repository")
	}
}
