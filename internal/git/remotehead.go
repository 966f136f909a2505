package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// RemoteHeads reads the remote's default branch and the SHAs of the given branches in one ls-remote,
// so a step learns all it needs of the remote in one round trip. A branch the remote lacks is absent from
// the map.
func (r *Repo) RemoteHeads(ctx context.Context, branches ...string) (defaultBranch string, shas map[string]string, err error) {
	args := []string{"ls-remote", "--symref", r.remote(), "HEAD"}
	for _, b := range branches {
		args = append(args, "refs/heads/"+b)
	}
	out, err := r.runAuth(ctx, r.Dir, args...)
	if err != nil {
		return "", nil, fmt.Errorf("reading the remote's branches: %w", err)
	}
	shas = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if target, ok := strings.CutPrefix(line, "ref: "); ok {
			// "ref: refs/heads/main\tHEAD"
			if ref, name, _ := strings.Cut(target, "\t"); name == "HEAD" {
				defaultBranch = strings.TrimPrefix(ref, "refs/heads/")
			}
			continue
		}
		sha, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		for _, b := range branches {
			if name == "refs/heads/"+b {
				shas[b] = sha
			}
		}
	}
	if defaultBranch == "" {
		return "", shas, errors.New("the remote did not say which branch is its default (HEAD)")
	}
	return defaultBranch, shas, nil
}
