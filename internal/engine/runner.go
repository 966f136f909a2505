package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// runner is the pipeline's side of one step: the step's own runner (steps.Runner: the agent's session,
// the copies, what the agent used), which sees the issue as a snapshot, and the issue as the step began
// (a value), whose record the write-ahead is written from.
type runner struct {
	cfg config.Config
	*steps.Runner
	ic issue // its writer (ic.w) writes the attempt ahead
}

// runner makes the runner of one step (step, "" for a person's command) on ic, as ic stands now.
func (e *Engine) runner(ic issue, step workflow.Event) *runner {
	r := &runner{ic: ic, cfg: e.Config}
	r.Runner = steps.NewRunner(steps.Options{Issue: ic.snapshot(), Step: step, Config: e.Config, GitHub: e.GitHub,
		Log: e.Log, Workspaces: e.Workspaces, Prompts: e.Prompts, Author: e.Author, Writer: ic.w, People: ic.people,
		Now: e.now, Table: e.table(), Ahead: r.writeAhead,
		Session: func(w *steps.Work) Session { return e.session(ic.n, ic.rec, w) }})
	return r
}

// snapshot is the issue as a step sees it, with its labels as they stand now: a copy that nothing the run
// writes later changes.
func (ic issue) snapshot() steps.Issue {
	gh := ic.gh
	gh.Labels = make([]ghapi.Label, 0, len(ic.w.labels))
	for _, l := range ic.w.labels {
		gh.Labels = append(gh.Labels, ghapi.Label{Name: l})
	}
	return steps.Issue{N: ic.n, GH: gh, Rec: ic.rec.Clone(), State: ic.state}
}

// close ends the step's work once its outcome is written: res says which of ralph's commits GitHub did not
// verify and what the agent used, and the copies are removed.
func (r *runner) close(res *Result) {
	res.Unverified = append(res.Unverified, r.Close()...)
	res.Usage = r.Usage
}

// writeAhead records the step's attempt before the agent starts, once per run; if GitHub does not take
// it, no agent runs.
func (r *runner) writeAhead(ctx context.Context) error {
	ic := r.ic
	if r.Ahead != nil || r.Step == "" {
		return nil
	}
	rec := ic.rec.Clone()
	rec.FailedStep, rec.Failures = r.Step, failuresAfter(ic.rec, r.Step)
	rec.Attempt = &Attempt{Step: r.Step, Reserved: r.reservation()}
	if err := ic.w.saveRecord(ctx, ic, rec); err != nil {
		return fmt.Errorf("recording the %s step's attempt before the agent starts (the agent did not run): %w", r.Step, err)
	}
	r.Ahead = &rec
	// A status comment shows where the issue is with one state label (an issue enrolled in this run has
	// none yet).
	if !ic.w.shows(ic.state) {
		if _, err := ic.w.setState(ctx, ic, ic.state); err != nil {
			return fmt.Errorf("recording the %s step's attempt before the agent starts (the agent did not run): %w", r.Step, err)
		}
	}
	return nil
}

// failuresAfter is the step's count of failures in a row once one more is counted.
func failuresAfter(rec Record, step workflow.Event) int {
	if rec.FailedStep == step {
		return rec.Failures + 1
	}
	return 1
}

// reservation is what a step's agent may spend at most, in dollars: agent.max_cost, or else what is left
// of budget.issue (0: no budget bounds it).
func (r *runner) reservation() float64 {
	if c := r.cfg.Agent.MaxCost; c > 0 {
		return c
	}
	if b := r.cfg.Budget.Issue; b > 0 {
		spent := 0.0
		if r.ic.rec.Usage != nil {
			spent = r.ic.rec.Usage.CostUSD
		}
		if b > spent {
			return b - spent
		}
	}
	return 0
}
