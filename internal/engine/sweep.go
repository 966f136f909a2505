package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Lister lists issues; *ghapi.Client implements it.
type Lister interface {
	Issues(ctx context.Context, f ghapi.IssueFilter) ([]ghapi.Issue, error)
}

// SweepCandidates lists enrolled open issues that have a step ralph can run now, oldest first, at most max.
// It also returns how many enrolled open issues it looked at.
func SweepCandidates(ctx context.Context, gh Lister, cfg config.Config, max int) (picked []int, looked int, err error) {
	open, err := gh.Issues(ctx, ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}})
	if err != nil {
		return nil, 0, fmt.Errorf("listing enrolled issues: %w", err)
	}
	picked = []int{}
	for _, is := range open {
		if len(picked) >= max {
			break
		}
		if Ready(is.LabelNames(), cfg) {
			picked = append(picked, is.Number)
		}
	}
	return picked, len(open), nil
}

// Ready says whether an enrolled issue with these labels has a step ralph can run now: not at a gate, not
// terminal, not in a lock state.
func Ready(labels []string, cfg config.Config) bool {
	states := stateLabels(labels)
	switch len(states) {
	case 0:
		return true // enrolled by the label, not started yet
	case 1:
	default:
		return true // the run repairs the labels
	}
	switch states[0].Kind() {
	case workflow.Waiting:
		return true
	case workflow.Gate:
		return states[0] == workflow.PlanInReview && cfg.Review != config.ReviewInteractive
	}
	return false
}
