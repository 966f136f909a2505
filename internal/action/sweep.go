package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// sweep finds enrolled open issues with a step to do, oldest first, at most sweep.max, and advances them one
// after another (or, with sweep.matrix or dry_run, only lists them in the `issues` output).
func (r *runner) sweep(ctx context.Context, eng *engine.Engine, gh *ghapi.Client, cfg config.Config) error {
	open, err := gh.Issues(ctx, ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}})
	if err != nil {
		return fmt.Errorf("listing enrolled issues: %w", err)
	}
	r.issues = []int{}
	for _, is := range open {
		if len(r.issues) >= cfg.Sweep.Max {
			break
		}
		if ready(is, cfg) {
			r.issues = append(r.issues, is.Number)
		}
	}
	r.a.Infof("sweep: %d enrolled open issues, %d to advance: %v", len(open), len(r.issues), r.issues)
	if r.dryRun || cfg.Sweep.Matrix {
		r.outputs()
		r.summary(fmt.Sprintf("Sweep: %d issues to advance.", len(r.issues)), nil)
		return nil
	}
	var errs []error
	for _, n := range r.issues {
		res, err := r.one(ctx, eng, Trigger{Command: CmdAdvance}, n)
		r.results = append(r.results, res)
		if err != nil {
			errs = append(errs, err)
		}
	}
	r.outputs()
	err = errors.Join(errs...)
	r.summary(fmt.Sprintf("Sweep: advanced %d issues.", len(r.issues)), err)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// ready: enrolled, in a state with a step ralph can run now (not a gate, not terminal, not locked).
func ready(is ghapi.Issue, cfg config.Config) bool {
	var states []workflow.State
	for _, l := range is.LabelNames() {
		if s, ok := workflow.StateFromLabel(l); ok {
			states = append(states, s)
		}
	}
	if len(states) == 0 {
		return true // enrolled by label, not yet started
	}
	if len(states) > 1 {
		return true // the run repairs it
	}
	switch states[0].Kind() {
	case workflow.Waiting:
		return true
	case workflow.Gate:
		return states[0] == workflow.PlanInReview && cfg.Review != config.ReviewInteractive
	}
	return false
}
