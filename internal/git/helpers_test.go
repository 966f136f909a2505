package git

import (
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture is a bare origin whose main has one commit, the user's checkout (a clone of it), and ralph's
// repository opened on that checkout. ralph's runner gets a private, empty HOME; the test's own git
// commands (setup, and the checks of what ralph did) run with a runner of their own.
type fixture struct {
	root     string
	home     string
	origin   string
	checkout string
	base     string // main's commit
	runner   ExecRunner
	repo     *Repo
}

// setupEnv is the environment of the test's own git commands: no config file at all, and an identity.
func setupEnv(home string) []string {
	return []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	}
}

var sig = Signature{Name: "ralph", Email: "ralph@example.com"}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{root: root, home: filepath.Join(root, "home"), origin: filepath.Join(root, "origin.git"), checkout: filepath.Join(root, "checkout")}
	mkdir(t, f.home)
	f.runner = ExecRunner{Env: []string{"HOME=" + f.home, "XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config")}}
	f.git(t, root, "init", "--quiet", "--bare", "--initial-branch=main", f.origin)
	f.git(t, root, "clone", "--quiet", f.origin, f.checkout)
	writeFile(t, filepath.Join(f.checkout, "README.md"), "hello\n")
	writeFile(t, filepath.Join(f.checkout, ".gitignore"), "*.log\n")
	f.git(t, f.checkout, "add", ".")
	f.git(t, f.checkout, "commit", "--quiet", "-m", "initial")
	f.git(t, f.checkout, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	f.base = f.git(t, f.checkout, "rev-parse", "HEAD")
	repo, err := Open(context.Background(), f.runner, filepath.Join(root, "ralph.git"), f.checkout, "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	repo.Branches = "ralph/"
	f.repo = repo
	return f
}

// git runs the test's own git in dir and returns its trimmed stdout.
func (f *fixture) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return runGit(t, setupEnv(f.home), dir, args...)
}

// ralph runs the test's own git on ralph's repository (to look at what ralph did).
func (f *fixture) ralph(t *testing.T, args ...string) string {
	t.Helper()
	return runGit(t, append(setupEnv(f.home), "GIT_DIR="+f.repo.GitDir), "", args...)
}

// remoteSHA is where branch points in the bare repository at dir ("" when nowhere).
func (f *fixture) remoteSHA(t *testing.T, bare, branch string) string {
	t.Helper()
	out, _ := ExecRunner{Env: setupEnv(f.home)}.Run(context.Background(), bare, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return strings.TrimSpace(string(out))
}

// commitFile builds, in ralph's repository, a commit on parent that writes name with content.
func (f *fixture) commitFile(t *testing.T, r *Repo, parent, name, content, msg string) string {
	t.Helper()
	ctx := context.Background()
	index := filepath.Join(t.TempDir(), "index")
	if err := r.ReadTree(ctx, index, parent); err != nil {
		t.Fatal(err)
	}
	if err := r.AddBlob(ctx, index, name, []byte(content)); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitTree(ctx, tree, parent, msg, sig)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func runGit(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	out, err := ExecRunner{Env: env}.Run(context.Background(), dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
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

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	writeFile(t, path, "#!/bin/sh\n"+body+"\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func basic(token string) string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
}

// call is one command a recordingRunner saw.
type call struct {
	dir       string
	args, env []string
}

// recordingRunner records every command line and environment and runs it with the real runner.
type recordingRunner struct {
	next  Runner
	mu    sync.Mutex
	calls []call
}

func (r *recordingRunner) Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, call{dir, append([]string(nil), args...), append([]string(nil), env...)})
	r.mu.Unlock()
	return r.next.Run(ctx, dir, env, args...)
}

func (r *recordingRunner) RunInput(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, call{dir, append([]string(nil), args...), append([]string(nil), env...)})
	r.mu.Unlock()
	return r.next.(InputRunner).RunInput(ctx, dir, env, stdin, args...)
}

func (r *recordingRunner) recorded() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// funcRunner answers every command with a function of its arguments.
type funcRunner func(args []string) ([]byte, error)

func (f funcRunner) Run(_ context.Context, _ string, _ []string, args ...string) ([]byte, error) {
	return f(args)
}

// addAll records every file of wt in index with the test's own git (ralph's never reads a work tree).
func addAll(t *testing.T, f *fixture, index, wt string) {
	t.Helper()
	runGit(t, append(setupEnv(f.home), "GIT_DIR="+f.repo.GitDir, "GIT_WORK_TREE="+wt, "GIT_INDEX_FILE="+index), wt, "add", "--all")
}
