package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Write-ahead accounting: before the agent starts, the status comment records the attempt as a failure of
// the step and the step's budget as spent. A run that then records its outcome replaces both with what
// happened; a run that cannot (GitHub refuses the edit, the process dies) leaves them counted, so the agent
// runs at most max_failures times per step and the issue's budget counts it, whatever GitHub answers.

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
	if err := r.w.saveRecord(ctx, rec); err != nil {
		return fmt.Errorf("recording the %s step's attempt before the agent starts (the agent did not run): %w", r.Step, err)
	}
	r.Ahead = &rec
	// A status comment shows where the issue is with one state label (an issue enrolled in this run has
	// none yet).
	if st := workflow.StatesFromLabels(ic.gh.LabelNames()); len(st) != 1 || st[0] != ic.state {
		if err := r.w.setState(ctx, ic.state); err != nil {
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

// foldAttempt takes a record's unrecorded attempt as what it was counted as: a failure (already in the
// record) and its reservation spent.
func foldAttempt(ic *issue) {
	a := ic.rec.Attempt
	if a == nil {
		return
	}
	ic.unrecorded, ic.rec.Attempt = a, nil
	if a.Reserved > 0 {
		ic.rec.AddUsage(&agent.Usage{CostUSD: a.Reserved})
	}
}

// startsExhausted says whether the step's agent has already started max_failures times in a row without
// a recorded success: it does not start again.
func (e *Engine) startsExhausted(ic *issue, st *Step) bool {
	return st.Agent(e.Config) && ic.rec.FailedStep == st.Name && ic.rec.Failures >= e.Config.MaxFailures
}

// unrecorded sends the issue to a person when ralph could not record the outcome of a step whose agent
// ran (werr): the record written ahead, with Human Needed and why, or, when GitHub takes no record at all,
// the label and one short comment. The attempt stays counted either way.
func (e *Engine) unrecorded(ctx context.Context, r *runner, from workflow.State, werr error) error {
	ic := r.ic
	// GitHub's 4xx refuses this record for good (422: too long, say); anything else may pass on the next
	// run, which the attempt counted ahead already bounds.
	var ge *ghapi.Error
	if r.Ahead == nil || !errors.As(werr, &ge) || ge.Status < 400 || ge.Status > 499 {
		return werr
	}
	w := ic.w
	why := cutBytes(Inert(werr.Error()), 300)
	reason := fmt.Sprintf("ralph could not record the outcome of the %s step (GitHub answered: %s); the agent's attempt is counted as a failure and its budget as spent.", r.Step, why)
	rec := r.Ahead.Clone()
	if err := e.table().Flow.Check(ic.state, workflow.Escalate, workflow.HumanNeeded); err == nil || ic.state == workflow.HumanNeeded {
		rec.Before, rec.Reason, rec.State = e.table().RestartState(from), reason, workflow.HumanNeeded
		if serr := w.saveRecord(ctx, rec); serr == nil {
			ic.rec = rec
		}
	}
	body := fmt.Sprintf("### ralph: the outcome of %s could not be recorded, a person is needed\n\n%s\n\nLook at the run's log, then say `/ralph retry` (or run `gh ralph retry %d`).", r.Step, reason, ic.n)
	lerr := w.setState(ctx, workflow.HumanNeeded)
	cerr := w.notice(ctx, fmt.Sprintf("unrecorded %s %d", r.Step, r.Ahead.Runs), body)
	if lerr != nil || cerr != nil {
		e.Log.Warnf("#%d: asking for a person: %v %v", ic.n, lerr, cerr)
	}
	return werr
}

// cutBytes is s, at most n bytes of it, whole runes, with an ellipsis when cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
