package git

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Auth is the credential for talking to the remote. An empty Token means none.
type Auth struct {
	Token string
}

func (a Auth) basic() string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + a.Token))
}

// Repo is the user's repository (the checkout ralph was started in).
type Repo struct {
	Dir    string
	Runner Runner
	Auth   Auth
	Remote string // default "origin"
	// WorktreeRoot is where worktrees are made; "" is a directory of this repository's own under the
	// user's cache directory (outside the checkout, and outside .git).
	WorktreeRoot string
}

// hardening is passed to every git command ralph runs. The agent can write into
// the shared .git directory, so a hook or fsmonitor it planted must not run inside
// ralph's own git commands, whose command line may carry the auth header and whose
// environment is ralph's (which holds the token).
var hardening = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor="}

// baseEnv keeps git's output parseable and stops it from prompting for a password.
var baseEnv = []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}

func (r *Repo) remote() string {
	if r.Remote == "" {
		return "origin"
	}
	return r.Remote
}

func (r *Repo) redactor() redactor {
	if r.Auth.Token == "" {
		return nil
	}
	// Longest first so that the header is replaced whole.
	return redactor{r.Auth.basic(), r.Auth.Token}
}

// run runs git in dir with the hardening options and the given env, and removes
// the token from any error.
func (r *Repo) run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	full := append(append([]string{}, hardening...), args...)
	out, err := r.Runner.Run(ctx, dir, append(append([]string{}, baseEnv...), env...), full...)
	return out, r.redactor().error(err)
}

// runAuth is run for commands that talk to the remote: the auth header is given
// on this command line only, never written to a config file or a remote URL.
func (r *Repo) runAuth(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var auth []string
	if r.Auth.Token != "" {
		auth = []string{"-c", "http.extraheader=AUTHORIZATION: basic " + r.Auth.basic()}
	}
	return r.run(ctx, dir, nil, append(auth, args...)...)
}

// GitCommonDir returns the absolute path of the repository's common git directory
// (the .git directory shared by all worktrees).
func (r *Repo) GitCommonDir(ctx context.Context) (string, error) {
	out, err := r.run(ctx, r.Dir, nil, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("find git directory: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.Dir, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find git directory: %w", err)
	}
	return abs, nil
}

// MarkSafe adds Dir to the global safe.directory list unless it is there already.
// The Action runs as root in a checkout owned by another user, which git refuses
// to work in otherwise.
func (r *Repo) MarkSafe(ctx context.Context) error {
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return fmt.Errorf("mark safe directory: %w", err)
	}
	// --get-all exits 1 when the key is unset; that is "not there", not a failure.
	out, _ := r.run(ctx, "", nil, "config", "--global", "--get-all", "safe.directory")
	for _, line := range strings.Split(string(out), "\n") {
		if line == dir || line == "*" {
			return nil
		}
	}
	if _, err := r.run(ctx, "", nil, "config", "--global", "--add", "safe.directory", dir); err != nil {
		return fmt.Errorf("mark %s a safe directory: %w", dir, err)
	}
	return nil
}

// Fetch fetches refspecs from the remote.
func (r *Repo) Fetch(ctx context.Context, refspecs ...string) error {
	args := append([]string{"fetch", "--no-tags", r.remote()}, refspecs...)
	if _, err := r.runAuth(ctx, r.Dir, args...); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

// worktreePath is where the worktree called name lives.
func (r *Repo) worktreePath(ctx context.Context, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("invalid worktree name %q", name)
	}
	root, err := r.worktreeRoot(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, name), nil
}

// worktreeRoot is the directory of the repository's worktrees: Repo.WorktreeRoot, or one of its own under
// the user's cache directory. Not under .git: agent CLIs refuse to edit files there (Claude Code treats
// anything below a .git directory as sensitive), and the worktree is where the agent works.
func (r *Repo) worktreeRoot(ctx context.Context) (string, error) {
	if r.WorktreeRoot != "" {
		return r.WorktreeRoot, nil
	}
	common, err := r.GitCommonDir(ctx)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(common))
	repo := filepath.Base(filepath.Dir(common)) // the checkout's directory name, for people who look
	if filepath.Base(common) != ".git" {
		repo = strings.TrimSuffix(filepath.Base(common), ".git")
	}
	return filepath.Join(cache, "ralph", "worktrees", fmt.Sprintf("%s-%x", repo, sum[:6])), nil
}

// registered reports whether git has a worktree record for path, and whether
// that record is prunable (its directory is gone).
func (r *Repo) registered(ctx context.Context, path string) (found, prunable bool, err error) {
	out, err := r.run(ctx, r.Dir, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return false, false, fmt.Errorf("list worktrees: %w", err)
	}
	want := canonical(path)
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			cur = canonical(strings.TrimPrefix(line, "worktree "))
			if cur == want {
				found = true
			}
		case cur == want && strings.HasPrefix(line, "prunable"):
			prunable = true
		}
	}
	return found, prunable, nil
}

// canonical resolves symlinks (macOS's /tmp is one) so that paths compare equal.
func canonical(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// Worktree returns a detached worktree called name, reset to startPoint (a SHA or
// a ref), at <worktree root>/<name> (see worktreeRoot). A worktree left by an earlier
// run (perhaps one that crashed) is reused after a hard reset and a clean; a stale
// record whose directory is gone is pruned first. The user's checkout, its branch
// and its index are never touched, and no local branch is created.
func (r *Repo) Worktree(ctx context.Context, name, startPoint string) (*Worktree, error) {
	path, err := r.worktreePath(ctx, name)
	if err != nil {
		return nil, err
	}
	found, prunable, err := r.registered(ctx, path)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(filepath.Join(path, ".git"))
	if found && !prunable && statErr == nil {
		w := &Worktree{Dir: path, Repo: r}
		if err := w.reset(ctx, startPoint); err != nil {
			return nil, err
		}
		return w, nil
	}
	if found {
		if _, err := r.run(ctx, r.Dir, nil, "worktree", "prune"); err != nil {
			return nil, fmt.Errorf("prune stale worktree %s: %w", name, err)
		}
	}
	// Whatever is left at path is not a worktree git knows about: junk from a crash.
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("clear worktree directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create worktree directory: %w", err)
	}
	if _, err := r.run(ctx, r.Dir, nil, "worktree", "add", "--detach", path, startPoint); err != nil {
		return nil, fmt.Errorf("add worktree %s at %s: %w", name, startPoint, err)
	}
	return &Worktree{Dir: path, Repo: r}, nil
}

// RemoveWorktree removes the worktree called name and its directory. Removing one
// that does not exist is not an error.
func (r *Repo) RemoveWorktree(ctx context.Context, name string) error {
	path, err := r.worktreePath(ctx, name)
	if err != nil {
		return err
	}
	found, prunable, err := r.registered(ctx, path)
	if err != nil {
		return err
	}
	if found && !prunable {
		if _, err := r.run(ctx, r.Dir, nil, "worktree", "remove", "--force", "--force", path); err != nil {
			return fmt.Errorf("remove worktree %s: %w", name, err)
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove worktree %s: %w", name, err)
	}
	if found {
		if _, err := r.run(ctx, r.Dir, nil, "worktree", "prune"); err != nil {
			return fmt.Errorf("prune worktree %s: %w", name, err)
		}
	}
	return nil
}
