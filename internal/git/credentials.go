package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DropPersistedCredentials removes credentials an earlier step left in the checkout's own git config:
// actions/checkout (persist-credentials: true, its default) stores the token as http.<url>.extraheader.
// The agent works in a worktree that shares that config, so the token must not stay there; ralph passes
// its own credential to each push instead. It returns the keys it removed.
func (r *Repo) DropPersistedCredentials(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, r.Dir, nil, "config", "--local", "--name-only", "--get-regexp", `^http\..*extraheader$`)
	if err != nil {
		// Exit status 1: no such key, nothing to do.
		var ce *CommandError
		if errors.As(err, &ce) && strings.TrimSpace(ce.Stderr) == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the checkout's git config: %w", err)
	}
	var removed []string
	for _, key := range strings.Fields(string(out)) {
		if _, err := r.run(ctx, r.Dir, nil, "config", "--local", "--unset-all", key); err != nil {
			return removed, fmt.Errorf("removing %s from the checkout's git config: %w", key, err)
		}
		removed = append(removed, key)
	}
	return removed, nil
}
