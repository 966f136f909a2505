package engine

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// What the readers above the engine (a sweep, gh ralph status) take from it, beside its types and the
// planner: they read GitHub as a run reads it.

// OpenBlockers lists the open issues that block issue n (one request), as the planner sees them.
func OpenBlockers(ctx context.Context, gh interface {
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
}, n int) ([]int, error) {
	return steps.OpenBlockers(ctx, gh, n)
}

// IsStep says whether ev names one of the workflow's steps: what record.Find asks of the workflow, for a
// reader that finds ralph's record as a run finds it.
func IsStep(ev workflow.Event) bool { return isStep(ev) }
