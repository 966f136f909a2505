package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Lister lists issues and says who labeled them; *ghapi.Client implements it.
type Lister interface {
	Issues(ctx context.Context, f ghapi.IssueFilter) ([]ghapi.Issue, error)
	LabeledBy(ctx context.Context, n int, label string) (string, error)
}

// Skipped is an enrolled issue a sweep passed over, and why.
type Skipped struct {
	Issue  int
	Reason string
}

// SweepCandidates lists enrolled open issues that have a step ralph can run now, oldest first, at most max.
// An issue counts only when the person who last added ralph:build may drive ralph (auth nil: anyone); the
// others are returned as skipped. looked is how many enrolled open issues there were.
func SweepCandidates(ctx context.Context, gh Lister, auth Authorizer, cfg config.Config, max int) (picked []int, skipped []Skipped, looked int, err error) {
	open, err := gh.Issues(ctx, ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("listing enrolled issues: %w", err)
	}
	picked = []int{}
	for _, is := range open {
		if len(picked) >= max {
			break
		}
		if !Ready(is.LabelNames(), cfg) {
			continue
		}
		if auth != nil {
			who, err := gh.LabeledBy(ctx, is.Number, workflow.LabelBuild)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("reading who enrolled #%d: %w", is.Number, err)
			}
			ok := false
			if who != "" {
				if ok, err = auth.Authorize(ctx, who); err != nil {
					return nil, nil, 0, fmt.Errorf("checking the permission of @%s: %w", who, err)
				}
			}
			if !ok {
				reason := fmt.Sprintf("%s was added by @%s, who may not drive ralph", workflow.LabelBuild, who)
				if who == "" {
					reason = fmt.Sprintf("no event says who added %s", workflow.LabelBuild)
				}
				skipped = append(skipped, Skipped{Issue: is.Number, Reason: reason})
				continue
			}
		}
		picked = append(picked, is.Number)
	}
	return picked, skipped, len(open), nil
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
