package workspace

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// fixture is a bare origin whose main holds a workflow, a symlink that already escapes, a dangling
// symlink and a directory, and a Store on it with its repository and agent areas in temporary
// directories. ralph's git gets a private, empty HOME.
type fixture struct {
	root   string
	home   string
	origin string
	base   string
	owner  Owner
	store  *Store
}

var sig = git.Signature{Name: "ralph", Email: "ralph@example.com"}

// testLimits are small, so that the tests can cross them cheaply.
var testLimits = Limits{File: 100, Total: 250, Document: 64}

func protected(p string) string {
	if strings.HasPrefix(p, ".github/workflows/") {
		return "protected_paths"
	}
	return ""
}

func setupEnv(home string) []string {
	return []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Agent", "GIT_AUTHOR_EMAIL=agent@example.com",
		"GIT_COMMITTER_NAME=Agent", "GIT_COMMITTER_EMAIL=agent@example.com",
	}
}

func newFixture(t *testing.T, owner Owner) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{root: root, home: filepath.Join(root, "home"), origin: filepath.Join(root, "origin.git"), owner: owner}
	mkdir(t, f.home)
	f.git(t, root, "init", "--quiet", "--bare", "--initial-branch=main", f.origin)
	seed := filepath.Join(root, "seed")
	f.git(t, root, "clone", "--quiet", f.origin, seed)
	writeFile(t, filepath.Join(seed, "README.md"), "hello\n")
	writeFile(t, filepath.Join(seed, ".github", "workflows", "ci.yml"), "on: push\n")
	writeFile(t, filepath.Join(seed, "sub", "keep.txt"), "keep\n")
	symlink(t, "../../outside", filepath.Join(seed, "docs", "escape"))
	symlink(t, "hop/..", filepath.Join(seed, "via"))
	f.git(t, seed, "add", ".")
	f.git(t, seed, "commit", "--quiet", "-m", "initial")
	f.git(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	f.base = f.git(t, seed, "rev-parse", "HEAD")
	f.store = f.open(t, Options{GitDir: filepath.Join(root, "ralph.git"), Agents: filepath.Join(root, "agents")})
	return f
}

// open opens a Store on the fixture's origin with opts, filling in what opts leaves out.
func (f *fixture) open(t *testing.T, opts Options) *Store {
	t.Helper()
	if opts.URL == "" && opts.Source == "" {
		opts.URL = f.origin
	}
	if opts.Runner == nil {
		opts.Runner = git.ExecRunner{Env: []string{"HOME=" + f.home, "XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config")}}
	}
	if opts.Protected == nil {
		opts.Protected = protected
	}
	if opts.Limits == (Limits{}) {
		opts.Limits = testLimits
	}
	opts.Owner = f.owner
	if opts.Branches == "" {
		opts.Branches = "ralph/"
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) prepare(t *testing.T, issue int, branch string) *Workspace {
	t.Helper()
	w, err := f.store.Prepare(context.Background(), issue, branch, "main")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// git runs the test's own git (an agent's, or another user's) in dir.
func (f *fixture) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git.ExecRunner{Env: setupEnv(f.home)}.Run(context.Background(), dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// agent runs git as the agent would in its copy (which, with an Owner, is not the test's user's).
func (f *fixture) agent(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return f.git(t, dir, append([]string{"-c", "safe.directory=*"}, args...)...)
}

// ralph runs the test's own git on ralph's repository, to look at what ralph did.
func (f *fixture) ralph(t *testing.T, args ...string) string {
	t.Helper()
	out, err := git.ExecRunner{Env: append(setupEnv(f.home), "GIT_DIR="+f.store.opts.GitDir)}.Run(context.Background(), "", nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// hasObject says whether ralph's repository holds the object.
func (f *fixture) hasObject(sha string) bool {
	_, err := git.ExecRunner{Env: append(setupEnv(f.home), "GIT_DIR="+f.store.opts.GitDir)}.Run(context.Background(), "", nil, "cat-file", "-e", sha)
	return err == nil
}

// remoteSHA is where branch points on the origin ("" nowhere).
func (f *fixture) remoteSHA(t *testing.T, branch string) string {
	t.Helper()
	out, _ := git.ExecRunner{Env: setupEnv(f.home)}.Run(context.Background(), f.origin, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return strings.TrimSpace(string(out))
}

// pushOther makes a commit on branch as someone else would (on from, "" for main) and pushes it.
func (f *fixture) pushOther(t *testing.T, branch, from, name, content string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "other")
	f.git(t, "", "clone", "--quiet", f.origin, dir)
	if from != "" {
		f.git(t, dir, "checkout", "--quiet", "-B", "work", "origin/"+from)
	}
	writeFile(t, filepath.Join(dir, name), content)
	f.git(t, dir, "add", ".")
	f.git(t, dir, "commit", "--quiet", "-m", "other: "+name)
	f.git(t, dir, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/"+branch)
	return f.git(t, dir, "rev-parse", "HEAD")
}

// asAgent gives everything in the agent's copy to the agent, as if it had written it.
func (f *fixture) asAgent(t *testing.T, w *Workspace) {
	t.Helper()
	if f.owner.UID == 0 {
		return
	}
	if err := chownTree(w.Dir, f.owner.UID, f.owner.GID); err != nil {
		t.Fatal(err)
	}
}

// owners are the variants the tests run in: the agent as ralph's own user and, as root, as a user of
// its own.
func owners() []Owner {
	o := []Owner{{}}
	if os.Geteuid() == 0 {
		o = append(o, Owner{UID: 61000, GID: 61000})
	}
	return o
}

func ownerName(o Owner) string {
	if o.UID == 0 {
		return "same user"
	}
	return fmt.Sprintf("uid %d", o.UID)
}

// blobID is git's id of a blob with content, to look for it in ralph's repository.
func blobID(content string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content))))
}

// refused is the text of a *RefusedError's entries, or "" for another error.
func refused(err error) string {
	var re *RefusedError
	if errors.As(err, &re) {
		return strings.Join(re.Paths, "; ")
	}
	return ""
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	writeFile(t, path, "#!/bin/sh\n"+body+"\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// notOwned lists the files under dir (dir included) not owned by uid:gid.
func notOwned(t *testing.T, dir string, uid, gid int) []string {
	t.Helper()
	var bad []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if st := info.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != gid {
			bad = append(bad, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}
