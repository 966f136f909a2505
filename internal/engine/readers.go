package engine

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// What the readers above the engine (a sweep, gh ralph status) take from it, beside its types and the
// planner: they read GitHub as a run reads it.

// OpenBlockers lists the open issues that block issue n (one request), as the planner sees them.
func OpenBlockers(ctx context.Context, gh interface {
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
}, n int) ([]int, error) {
	return openBlockers(ctx, gh, n)
}
