package git

import (
	"context"
	"fmt"
)

// CommitPaths commits only the given paths (relative to the worktree) as author, leaving any other change
// in the worktree uncommitted. Nothing to commit gives committed=false and no error.
func (w *Worktree) CommitPaths(ctx context.Context, msg string, author Signature, paths ...string) (sha string, committed bool, err error) {
	if len(paths) == 0 {
		return "", false, fmt.Errorf("commit: no paths given")
	}
	args := append([]string{"add", "--all", "--"}, paths...)
	if _, err := w.run(ctx, nil, args...); err != nil {
		return "", false, fmt.Errorf("stage %v: %w", paths, err)
	}
	args = append([]string{"diff", "--cached", "--name-only", "-z", "HEAD", "--"}, paths...)
	out, err := w.run(ctx, nil, args...)
	if err != nil {
		return "", false, fmt.Errorf("check staged changes: %w", err)
	}
	if len(out) > 0 {
		args = append([]string{"commit", "--quiet", "--no-verify", "-m", msg, "--only", "--"}, paths...)
		if _, err := w.run(ctx, author.env(), args...); err != nil {
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

// env sets the author and committer for one git command, without touching any config file.
func (s Signature) env() []string {
	var env []string
	if s.Name != "" {
		env = append(env, "GIT_AUTHOR_NAME="+s.Name, "GIT_COMMITTER_NAME="+s.Name)
	}
	if s.Email != "" {
		env = append(env, "GIT_AUTHOR_EMAIL="+s.Email, "GIT_COMMITTER_EMAIL="+s.Email)
	}
	return env
}
