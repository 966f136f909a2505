package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture is a bare origin, a clone of it (the user's checkout) with one commit on
// main pushed, and a Repo on the clone. git runs with a private HOME and no system
// config, passed through the runner so that tests can run in parallel.
type fixture struct {
	runner ExecRunner
	home   string
	origin string
	repo   *Repo
	base   string // the SHA of main
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	gitconfig := filepath.Join(home, ".gitconfig")
	writeFile(t, gitconfig, "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n")
	f := &fixture{
		runner: ExecRunner{Env: []string{
			"HOME=" + home,
			"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + gitconfig,
		}},
		home:   home,
		origin: filepath.Join(root, "origin.git"),
	}
	checkout := filepath.Join(root, "checkout")
	f.git(t, root, "init", "--quiet", "--bare", f.origin)
	f.git(t, root, "clone", "--quiet", f.origin, checkout)
	writeFile(t, filepath.Join(checkout, "README.md"), "hello\n")
	writeFile(t, filepath.Join(checkout, ".gitignore"), "*.log\n")
	f.git(t, checkout, "add", ".")
	f.git(t, checkout, "commit", "--quiet", "-m", "initial")
	f.git(t, checkout, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	f.base = f.git(t, checkout, "rev-parse", "HEAD")
	f.repo = &Repo{Dir: checkout, Runner: f.runner, WorktreeRoot: filepath.Join(root, "worktrees")}
	return f
}

// git runs git in dir and returns its trimmed stdout, failing the test on error.
func (f *fixture) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := f.runner.Run(context.Background(), dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// commit makes a commit in dir that writes name with content.
func (f *fixture) commit(t *testing.T, dir, name, content string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), content)
	f.git(t, dir, "add", "--all")
	f.git(t, dir, "commit", "--quiet", "-m", "write "+name)
	return f.git(t, dir, "rev-parse", "HEAD")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// recordingRunner records every command line and runs it with the real runner.
type recordingRunner struct {
	next  Runner
	mu    sync.Mutex
	calls [][]string
}

func (r *recordingRunner) Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, append([]string(nil), args...))
	r.mu.Unlock()
	return r.next.Run(ctx, dir, env, args...)
}

func (r *recordingRunner) recorded() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.calls...)
}

func chmodX(path string) error { return os.Chmod(path, 0o755) }
