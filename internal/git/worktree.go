package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Worktree is a detached worktree of Repo where the agent works.
type Worktree struct {
	Dir  string
	Repo *Repo
}

// Signature names the author and committer of a commit.
type Signature struct {
	Name, Email string
}

// Change is one path that differs from a base commit.
type Change struct {
	Path       string
	OldPath    string // the source of a rename or copy
	Status     string // "A", "M", "D", "R", "C" or "T" (type change)
	Symlink    bool   // Path is a symbolic link (after the change)
	LinkTarget string // where the link points, when Symlink
}

// PushRejectedError is a push the remote refused: the lease did not hold, the
// update was not a fast-forward, or a server-side rule declined it.
type PushRejectedError struct {
	Branch string
	Reason string // as git reports it, e.g. "stale info" or "pre-receive hook declined"
}

func (e *PushRejectedError) Error() string {
	return fmt.Sprintf("push to branch %s rejected: %s", e.Branch, e.Reason)
}

func (w *Worktree) run(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return w.Repo.run(ctx, w.Dir, env, args...)
}

// reset makes the worktree exactly startPoint, detached, with no stray files.
func (w *Worktree) reset(ctx context.Context, startPoint string) error {
	// A run that crashed in the middle of a git command leaves index.lock behind,
	// which would fail every later run. Only one run works on a worktree at a time.
	if out, err := w.run(ctx, nil, "rev-parse", "--git-path", "index.lock"); err == nil {
		lock := strings.TrimSpace(string(out))
		if !filepath.IsAbs(lock) {
			lock = filepath.Join(w.Dir, lock)
		}
		if err := os.Remove(lock); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale index lock: %w", err)
		}
	}
	for _, args := range [][]string{
		// checkout --detach first: if the agent switched to a branch, reset must
		// not move that branch.
		{"checkout", "--quiet", "--force", "--detach", startPoint},
		{"reset", "--quiet", "--hard", startPoint},
		{"clean", "-ffdx", "--quiet"},
	} {
		if _, err := w.run(ctx, nil, args...); err != nil {
			return fmt.Errorf("reset worktree to %s: %w", startPoint, err)
		}
	}
	return nil
}

// HeadSHA returns the commit the worktree is at.
func (w *Worktree) HeadSHA(ctx context.Context) (string, error) {
	out, err := w.run(ctx, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("read worktree HEAD: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Changes lists every path whose content differs from commit since: changes the
// agent committed itself, staged, unstaged and untracked (but not ignored) files.
//
// It stages everything into a throwaway copy of the worktree's index, so that
// renames of files git does not know yet are detected, while the real index is
// left as the agent left it.
func (w *Worktree) Changes(ctx context.Context, since string) ([]Change, error) {
	out, err := w.run(ctx, nil, "rev-parse", "--git-path", "index")
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	index := strings.TrimSpace(string(out))
	if !filepath.IsAbs(index) {
		index = filepath.Join(w.Dir, index)
	}
	tmp, err := os.CreateTemp("", "ralph-index-*")
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := copyInto(tmp, index); err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := w.run(ctx, env, "add", "--all"); err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	out, err = w.run(ctx, env, "diff", "--cached", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", since, "--")
	if err != nil {
		return nil, fmt.Errorf("list changes since %s: %w", since, err)
	}
	changes, err := parseRaw(out)
	if err != nil {
		return nil, fmt.Errorf("list changes since %s: %w", since, err)
	}
	for i, c := range changes {
		if !c.Symlink {
			continue
		}
		target, err := os.Readlink(filepath.Join(w.Dir, filepath.FromSlash(c.Path)))
		if err != nil {
			return nil, fmt.Errorf("read link %s: %w", c.Path, err)
		}
		changes[i].LinkTarget = target
	}
	return changes, nil
}

// copyInto copies the file at src into dst and closes dst; a missing src leaves
// dst empty, which git reads as an empty index.
func copyInto(dst *os.File, src string) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return dst.Close()
	}
	if err != nil {
		dst.Close()
		return err
	}
	defer in.Close()
	if _, err := io.Copy(dst, in); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// parseRaw parses `git diff --raw -z` output:
// ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0[<new path>\0]".
func parseRaw(out []byte) ([]Change, error) {
	s := strings.TrimSuffix(string(out), "\x00")
	if s == "" {
		return nil, nil
	}
	fields := strings.Split(s, "\x00")
	var changes []Change
	for i := 0; i < len(fields); i++ {
		head := fields[i]
		meta := strings.Fields(strings.TrimPrefix(head, ":"))
		if !strings.HasPrefix(head, ":") || len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("unexpected diff output %q", head)
		}
		c := Change{Status: meta[4][:1], Symlink: meta[1] == "120000"}
		if i+1 >= len(fields) {
			return nil, fmt.Errorf("diff output ends after %q", head)
		}
		i++
		c.Path = fields[i]
		if c.Status == "R" || c.Status == "C" {
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("diff output ends after %q", head)
			}
			i++
			c.OldPath, c.Path = c.Path, fields[i]
		}
		if c.Status == "D" {
			c.Symlink = false
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// CommitAll stages every change (git add -A) and commits it as author. When there
// is nothing to commit it returns committed=false and no error. sha is HEAD after
// the call either way.
func (w *Worktree) CommitAll(ctx context.Context, msg string, author Signature) (sha string, committed bool, err error) {
	if _, err := w.run(ctx, nil, "add", "--all"); err != nil {
		return "", false, fmt.Errorf("stage changes: %w", err)
	}
	out, err := w.run(ctx, nil, "diff", "--cached", "--name-only", "-z", "HEAD", "--")
	if err != nil {
		return "", false, fmt.Errorf("check staged changes: %w", err)
	}
	if len(out) > 0 {
		if _, err := w.run(ctx, author.env(), "commit", "--quiet", "--no-verify", "-m", msg); err != nil {
			return "", false, fmt.Errorf("commit: %w", err)
		}
		committed = true
	}
	sha, err = w.HeadSHA(ctx)
	if err != nil {
		return "", false, err
	}
	return sha, committed, nil
}

// Push pushes HEAD to refs/heads/<branch> on the remote, but only if the branch
// is still at expectOld; expectOld "" means the branch must not exist yet. If the
// branch already points at HEAD the push succeeds, so repeating a push that went
// through is harmless. A refusal is a *PushRejectedError.
func (w *Worktree) Push(ctx context.Context, branch string, expectOld string) error {
	ref := "refs/heads/" + branch
	if _, err := w.run(ctx, nil, "check-ref-format", ref); err != nil || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("invalid branch name %q", branch)
	}
	out, err := w.Repo.runAuth(ctx, w.Dir, "push", "--porcelain",
		"--force-with-lease="+ref+":"+expectOld, w.Repo.remote(), "HEAD:"+ref)
	if err == nil {
		return nil
	}
	if reason, ok := rejection(string(out)); ok {
		return &PushRejectedError{Branch: branch, Reason: reason}
	}
	var ce *CommandError
	if errors.As(err, &ce) {
		if reason, ok := rejection(ce.Stderr); ok {
			return &PushRejectedError{Branch: branch, Reason: reason}
		}
	}
	return fmt.Errorf("push to branch %s: %w", branch, err)
}

// rejection finds a refused ref in push output: porcelain lines
// "!\t<from>:<to>\t[rejected] (reason)" or the human form " ! [rejected] ... (reason)".
func rejection(out string) (string, bool) {
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "!") {
			continue
		}
		for _, kind := range []string{"[remote rejected]", "[rejected]"} {
			if _, after, ok := strings.Cut(t, kind); ok {
				reason := strings.TrimSpace(after)
				reason = strings.TrimSuffix(strings.TrimPrefix(reason, "("), ")")
				if reason == "" {
					reason = strings.Trim(kind, "[]")
				}
				return reason, true
			}
		}
	}
	return "", false
}

// Diff returns `git diff base...HEAD`: what the worktree's commits change since
// they left base.
func (w *Worktree) Diff(ctx context.Context, base string) (string, error) {
	out, err := w.run(ctx, nil, "diff", "--no-color", "--no-ext-diff", base+"...HEAD", "--")
	if err != nil {
		return "", fmt.Errorf("diff against %s: %w", base, err)
	}
	return string(out), nil
}
