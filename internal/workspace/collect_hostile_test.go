package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"golang.org/x/sys/unix"
)

// withSubmodule gives the fixture's main a submodule at mod (a gitlink to the one commit of a repository of
// its own, with mod/file.txt) and returns that repository.
func (f *fixture) withSubmodule(t *testing.T) string {
	t.Helper()
	sub := filepath.Join(f.root, "subrepo")
	f.git(t, "", "init", "--quiet", "--initial-branch=main", sub)
	writeFile(t, filepath.Join(sub, "file.txt"), "submodule's file\n")
	f.git(t, sub, "add", ".")
	f.git(t, sub, "commit", "--quiet", "-m", "sub")
	seed := filepath.Join(f.root, "seed-sub")
	f.git(t, "", "clone", "--quiet", f.origin, seed)
	f.git(t, seed, "-c", "protocol.file.allow=always", "submodule", "add", "--quiet", sub, "mod")
	f.git(t, seed, "commit", "--quiet", "-m", "submodule")
	f.git(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	f.base = f.git(t, seed, "rev-parse", "HEAD")
	return sub
}

// hostileRunner is ralph's git runner with a secret in ralph's own environment, the way the Action has its
// token (INPUT_TOKEN) there.
func (f *fixture) hostileRunner() git.ExecRunner {
	return git.ExecRunner{
		Environ: func() []string {
			return append(os.Environ(), "INPUT_TOKEN=ralph-secret-token", "GITHUB_TOKEN=ralph-secret-token")
		},
		Env: []string{"HOME=" + f.home, "XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config")},
	}
}

// TestCollectReadsTheTreeAsData: whatever the agent puts in its copy (a repository of its own at a
// submodule's path, whose config names a clean filter, an fsmonitor or hooks; a .git file or link pointing
// to such a repository; a repository deep in the tree; a .gitignore that is a FIFO), no program of it runs
// while ralph collects the change, and ralph's secrets reach none. The nested repositories are made so that
// git, run in the copy, would run them: a submodule checked out at the gitlink's commit, with a file changed.
func TestCollectReadsTheTreeAsData(t *testing.T) {
	t.Parallel()
	type setup struct {
		f      *fixture
		w      *Workspace
		sub    string // the submodule's own repository
		marker string // the planted programs append here
		prog   string // a program that records its environment in marker
	}
	// nested makes dir a clone of the submodule's repository (HEAD at the gitlink's commit) whose file has
	// the same size but another time, so that git status in it must read the file (through its filters).
	nested := func(t *testing.T, s setup, dir string) {
		t.Helper()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		s.f.git(t, "", "clone", "--quiet", s.sub, dir)
		touchOld(t, filepath.Join(dir, "file.txt"))
	}
	filter := func(t *testing.T, s setup, dir string) {
		t.Helper()
		s.f.agent(t, dir, "config", "filter.x.clean", s.prog)
		s.f.agent(t, dir, "config", "filter.x.required", "true")
	}
	tests := []struct {
		name   string
		attack func(t *testing.T, s setup)
		want   string // "" the change is collected (and holds nothing of the submodule); else in the refusal
	}{
		{"a clean filter in a repository at the gitlink's path", func(t *testing.T, s setup) {
			mod := filepath.Join(s.w.Dir, "mod")
			nested(t, s, mod)
			filter(t, s, mod)
			writeFile(t, filepath.Join(mod, ".gitattributes"), "* filter=x\n")
		}, ""},
		{"a clean filter named in the nested repository's info/attributes", func(t *testing.T, s setup) {
			mod := filepath.Join(s.w.Dir, "mod")
			nested(t, s, mod)
			filter(t, s, mod)
			writeFile(t, filepath.Join(mod, ".git", "info", "attributes"), "* filter=x\n")
		}, ""},
		{"an fsmonitor in a repository at the gitlink's path", func(t *testing.T, s setup) {
			mod := filepath.Join(s.w.Dir, "mod")
			nested(t, s, mod)
			s.f.agent(t, mod, "config", "core.fsmonitor", s.prog)
		}, ""},
		{"hooks in a repository at the gitlink's path", func(t *testing.T, s setup) {
			mod := filepath.Join(s.w.Dir, "mod")
			nested(t, s, mod)
			for _, h := range []string{"post-index-change", "post-checkout", "reference-transaction", "pre-commit"} {
				writeScript(t, filepath.Join(mod, ".git", "hooks", h), s.prog)
			}
		}, ""},
		{"a .git file at the gitlink's path pointing to a hostile repository", func(t *testing.T, s setup) {
			other := filepath.Join(s.f.root, "other")
			nested(t, s, other)
			filter(t, s, other)
			writeFile(t, filepath.Join(other, ".gitattributes"), "* filter=x\n")
			mod := filepath.Join(s.w.Dir, "mod")
			writeFile(t, filepath.Join(mod, "file.txt"), "submodule's file\n")
			touchOld(t, filepath.Join(mod, "file.txt"))
			writeFile(t, filepath.Join(mod, ".gitattributes"), "* filter=x\n")
			writeFile(t, filepath.Join(mod, ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
		}, ""},
		{"a symlinked .git at the gitlink's path", func(t *testing.T, s setup) {
			other := filepath.Join(s.f.root, "other")
			nested(t, s, other)
			filter(t, s, other)
			mod := filepath.Join(s.w.Dir, "mod")
			writeFile(t, filepath.Join(mod, "file.txt"), "submodule's file\n")
			touchOld(t, filepath.Join(mod, "file.txt"))
			writeFile(t, filepath.Join(mod, ".gitattributes"), "* filter=x\n")
			symlink(t, filepath.Join(other, ".git"), filepath.Join(mod, ".git"))
		}, ""},
		{"a repository deep in the tree", func(t *testing.T, s setup) {
			deep := filepath.Join(s.w.Dir, "sub", "a", "b")
			nested(t, s, deep)
			filter(t, s, deep)
			writeFile(t, filepath.Join(deep, ".gitattributes"), "* filter=x\n")
			s.f.agent(t, deep, "config", "core.fsmonitor", s.prog)
		}, "`sub/a/b/.git`"},
		{"a .git file deep in the tree", func(t *testing.T, s setup) {
			other := filepath.Join(s.f.root, "other")
			nested(t, s, other)
			filter(t, s, other)
			writeFile(t, filepath.Join(s.w.Dir, "sub", "x", ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
			writeFile(t, filepath.Join(s.w.Dir, "sub", "x", ".gitattributes"), "* filter=x\n")
			writeFile(t, filepath.Join(s.w.Dir, "sub", "x", "file.txt"), "x\n")
		}, "`sub/x/.git`"},
		{"a .gitignore that is a FIFO", func(t *testing.T, s setup) {
			if err := syscall.Mkfifo(filepath.Join(s.w.Dir, "sub", ".gitignore"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, owner := range owners() {
		for _, tt := range tests {
			t.Run(ownerName(owner)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, owner)
				s := setup{f: f, sub: f.withSubmodule(t), marker: filepath.Join(f.root, "marker")}
				f.store = f.open(t, Options{GitDir: filepath.Join(f.root, "ralph.git"), Agents: filepath.Join(f.root, "agents"), Runner: f.hostileRunner(),
					Limits: Limits{File: 1000, Total: 5000, Document: 64}})
				s.prog = fmt.Sprintf(`sh -c 'echo ran >> %[1]s; env >> %[1]s; cat'`, s.marker)
				s.w = f.prepare(t, 9, "ralph/issue-9")
				tt.attack(t, s)
				writeFile(t, filepath.Join(s.w.Dir, "work.txt"), "the agent's work\n")
				f.asAgent(t, s.w)
				if err := os.Chmod(f.root, 0o755); err != nil { // the agent's programs may write the marker
					t.Fatal(err)
				}

				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				changes, err := s.w.Collect(ctx)
				if b, rerr := os.ReadFile(s.marker); rerr == nil {
					t.Errorf("a program of the agent ran while ralph collected (secret seen: %v):\n%.400s", strings.Contains(string(b), "ralph-secret-token"), b)
				}
				if ctx.Err() != nil {
					t.Fatalf("Collect hung: %v", err)
				}
				if tt.want != "" {
					if got := refused(err); !strings.Contains(got, tt.want) {
						t.Errorf("Collect = %v, want a refusal naming %s", err, tt.want)
					}
					return
				}
				if err != nil {
					t.Fatalf("Collect = %v", err)
				}
				var paths []string
				for _, c := range changes {
					paths = append(paths, c.Path)
				}
				if got := strings.Join(paths, " "); got != "work.txt" {
					t.Errorf("Collect changed %q, want only work.txt (the gitlink stays as it was)", got)
				}
			})
		}
	}
}

func touchOld(t *testing.T, path string) {
	t.Helper()
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestCollectTooManyFiles: a copy with more entries than the limit is refused, without reading them all.
func TestCollectTooManyFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	f.store = f.open(t, Options{GitDir: filepath.Join(f.root, "ralph.git"), Agents: filepath.Join(f.root, "agents"), Limits: Limits{File: 100, Total: 250, Document: 64, Files: 50}})
	w := f.prepare(t, 10, "ralph/issue-10")
	for i := 0; i < 60; i++ {
		writeFile(t, filepath.Join(w.Dir, "many", fmt.Sprintf("f%03d", i)), "")
	}
	_, err := w.Collect(context.Background())
	if got := refused(err); !strings.Contains(got, "more than the limit of 50") {
		t.Errorf("Collect = %v, want a refusal for too many files", err)
	}
}

// TestCollectIgnorePatternsBounded: the agent writes the .gitignore files, and each untracked entry is
// tested against every pattern in effect where it lies; a copy whose patterns would make ralph test more
// than the limit is refused once it gets there, without testing the rest (before, nested .gitignore files
// of many patterns kept ralph reading the copy for hours), and a cancelled run stops the walk.
func TestCollectIgnorePatternsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	f.store = f.open(t, Options{GitDir: filepath.Join(f.root, "ralph.git"), Agents: filepath.Join(f.root, "agents"),
		Limits: Limits{File: 100, Total: 250, Document: 64, IgnoreTests: 10_000}})
	w := f.prepare(t, 11, "ralph/issue-11")
	var patterns strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&patterns, "**/a/**/n%d\n", i)
	}
	dir := w.Dir
	for level := 0; level < 3; level++ {
		dir = filepath.Join(dir, fmt.Sprintf("d%d", level))
		writeFile(t, filepath.Join(dir, ".gitignore"), patterns.String())
	}
	for i := 0; i < 20; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%02d", i)), "")
	}
	_, err := w.Collect(context.Background())
	if got := refused(err); !strings.Contains(got, "more than 10000 ignore patterns") || !strings.Contains(got, "1200 in effect at `d0/d1/d2`") {
		t.Errorf("Collect = %v, want a refusal for too many ignore pattern tests", err)
	}

	// Within the limit (the default's), the same copy is collected.
	f.store = f.open(t, Options{GitDir: filepath.Join(f.root, "ralph2.git"), Agents: filepath.Join(f.root, "agents2"),
		Limits: Limits{File: 1 << 20, Total: 1 << 20, Document: 64}})
	w = f.prepare(t, 12, "ralph/issue-12")
	dir = w.Dir
	for level := 0; level < 3; level++ {
		dir = filepath.Join(dir, fmt.Sprintf("d%d", level))
		writeFile(t, filepath.Join(dir, ".gitignore"), patterns.String())
	}
	writeFile(t, filepath.Join(dir, "f00"), "")
	if _, err := w.Collect(context.Background()); err != nil {
		t.Errorf("Collect within the default limit = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Collect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Collect with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestCollectAsGitAddAll: reading the copy in Go records what git add --all would: new, changed and
// deleted files, modes, symlinks, a file turned into a directory and a directory into a link; untracked
// paths the .gitignore files ignore are left out (a negation re-includes; an ignored directory is not
// entered), tracked files are recorded even when ignored; the agent's own .git at the top, whatever it is,
// is left out; a .gitignore that is a symlink is not read.
func TestCollectAsGitAddAll(t *testing.T) {
	t.Parallel()
	for _, owner := range owners() {
		t.Run(ownerName(owner), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, owner)
			f.store = f.open(t, Options{GitDir: filepath.Join(f.root, "ralph.git"), Agents: filepath.Join(f.root, "agents"), Limits: Limits{File: 1000, Total: 5000, Document: 64}})
			seed := filepath.Join(f.root, "seed2")
			f.git(t, "", "clone", "--quiet", f.origin, seed)
			writeFile(t, filepath.Join(seed, ".gitignore"), "*.log\nbuild/\n!keep.log\n")
			writeFile(t, filepath.Join(seed, "build", "tracked.o"), "tracked\n")
			writeFile(t, filepath.Join(seed, "tracked.log"), "tracked\n")
			writeFile(t, filepath.Join(seed, "becomes-dir"), "file\n")
			writeFile(t, filepath.Join(seed, "gone.txt"), "bye\n")
			f.git(t, seed, "add", "--force", ".")
			f.git(t, seed, "commit", "--quiet", "-m", "more")
			f.git(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
			w := f.prepare(t, 11, "ralph/issue-11")
			d := w.Dir

			writeFile(t, filepath.Join(d, "new.txt"), "new\n")
			writeFile(t, filepath.Join(d, "debug.log"), "ignored\n")
			writeFile(t, filepath.Join(d, "keep.log"), "re-included\n")
			writeFile(t, filepath.Join(d, "build", "out.o"), "ignored\n")
			writeFile(t, filepath.Join(d, "build", "tracked.o"), "changed\n")
			writeFile(t, filepath.Join(d, "tracked.log"), "changed\n")
			writeFile(t, filepath.Join(d, "sub", ".gitignore"), "local\n")
			writeFile(t, filepath.Join(d, "sub", "local"), "ignored below sub\n")
			writeFile(t, filepath.Join(d, "local"), "not ignored here\n")
			symlink(t, "../README.md", filepath.Join(d, "docs", ".gitignore"))
			writeFile(t, filepath.Join(d, "docs", "README.md"), "*\n")
			for _, p := range []string{"gone.txt", "becomes-dir"} {
				if err := os.Remove(filepath.Join(d, p)); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(d, "becomes-dir", "inside.txt"), "inside\n")
			if err := os.RemoveAll(filepath.Join(d, "sub", "keep.txt")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(d, "run.sh"), "echo\n")
			if err := os.Chmod(filepath.Join(d, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(d, "README.md"), 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, "README.md", filepath.Join(d, "link"))
			// The agent's own repository, replaced by a link to ralph's: never read.
			if err := os.RemoveAll(filepath.Join(d, ".git")); err != nil {
				t.Fatal(err)
			}
			symlink(t, f.store.opts.GitDir, filepath.Join(d, ".git"))
			f.asAgent(t, w)

			changes, err := w.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, c := range changes {
				got[c.Path] = c.Status + " " + c.NewMode
			}
			want := map[string]string{
				"new.txt": "A 100644", "keep.log": "A 100644", "build/tracked.o": "M 100644", "tracked.log": "M 100644",
				"sub/.gitignore": "A 100644", "local": "A 100644", "docs/.gitignore": "A 120000", "docs/README.md": "A 100644",
				"gone.txt": "D 000000", "becomes-dir": "D 000000", "becomes-dir/inside.txt": "A 100644", "sub/keep.txt": "D 000000",
				"run.sh": "A 100755", "README.md": "M 100755", "link": "A 120000",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Collect (-want +got):\n%s", diff)
			}
			sha, err := w.Commit(ctx, "all", sig)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.ralph(t, "show", sha+":build/tracked.o"); got != "changed" {
				t.Errorf("build/tracked.o = %q", got)
			}
			if got := f.ralph(t, "cat-file", "-p", sha+":docs/.gitignore"); got != "../README.md" {
				t.Errorf("the link's target = %q", got)
			}
		})
	}
}

// TestCollectSeesEveryChange: a file rewritten with content of the same size and its time set back is
// still read (its change time moved, which no process of the agent can set back); a tracked file replaced
// by a FIFO is refused without blocking.
func TestCollectSeesEveryChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Owner{})
	w := f.prepare(t, 12, "ralph/issue-12")
	p := filepath.Join(w.Dir, "README.md")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "HELLO\n")
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	changes, err := w.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "README.md" || changes[0].NewSHA != blobID("HELLO\n") {
		t.Errorf("Collect = %+v, want README.md changed to HELLO", changes)
	}
	if err := os.Remove(filepath.Join(w.Dir, "sub", "keep.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(w.Dir, "sub", "keep.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Collect(ctx); !strings.Contains(refused(err), "`sub/keep.txt` (a FIFO") {
		t.Errorf("Collect = %v, want the FIFO refused", err)
	}
}

// TestCollectDeepTree: a tree deeper than ralph walks is refused.
func TestCollectDeepTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	w := f.prepare(t, 13, "ralph/issue-13")
	d := w.Dir
	for i := 0; i <= maxDepth; i++ {
		d = filepath.Join(d, "d")
	}
	writeFile(t, filepath.Join(d, "x"), "x\n")
	if _, err := w.Collect(context.Background()); !strings.Contains(refused(err), "deeper than 256 directories") {
		t.Errorf("Collect = %v, want a refusal", err)
	}
}

// TestCollectDevice: a device the agent could not make but ralph must not open (here /dev/null's numbers)
// is left out when untracked and refused at a tracked path, without being opened.
func TestCollectDevice(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: making a device")
	}
	f := newFixture(t, Owner{})
	w := f.prepare(t, 15, "ralph/issue-15")
	null := int(unix.Mkdev(1, 3))
	if err := unix.Mknod(filepath.Join(w.Dir, "dev-new"), unix.S_IFCHR|0o644, null); err != nil {
		t.Fatal(err)
	}
	changes, err := w.Collect(context.Background())
	if err != nil || len(changes) != 0 {
		t.Fatalf("Collect = %v, %v; want nothing (the untracked device left out)", changes, err)
	}
	if err := os.Remove(filepath.Join(w.Dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(filepath.Join(w.Dir, "README.md"), unix.S_IFCHR|0o644, null); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Collect(context.Background()); !strings.Contains(refused(err), "`README.md` (a device") {
		t.Errorf("Collect = %v, want the device refused", err)
	}
}
