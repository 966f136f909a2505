package git

import (
	"context"
	"fmt"
	"strings"
)

// FindTrailer finds the newest commit reachable from HEAD but not from base whose message has the trailer
// line "key: value" (value "": any value); found is false when there is none.
func (w *Worktree) FindTrailer(ctx context.Context, base, key, value string) (sha string, found bool, err error) {
	out, err := w.run(ctx, nil, "log", "--format=%H%x00%B%x1e", "HEAD", "--not", base, "--")
	if err != nil {
		return "", false, fmt.Errorf("git log: %w", err)
	}
	want := key + ": " + value
	for _, rec := range strings.Split(string(out), "\x1e") {
		hash, msg, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x00")
		if !ok {
			continue
		}
		for _, line := range strings.Split(msg, "\n") {
			line = strings.TrimSpace(line)
			if line == want || (value == "" && strings.HasPrefix(line, key+": ")) {
				return hash, true, nil
			}
		}
	}
	return "", false, nil
}
