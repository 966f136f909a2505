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

// foldAttempt takes a record's unrecorded attempt as what it was counted as: a failure (already in the
// record) and its reservation spent. It returns the record without the attempt, and the attempt.
func foldAttempt(rec Record) (Record, *Attempt) {
	a := rec.Attempt
	if a == nil {
		return rec, nil
	}
	rec = rec.Clone()
	rec.Attempt = nil
	if a.Reserved > 0 {
		rec.AddUsage(&agent.Usage{CostUSD: a.Reserved})
	}
	return rec, a
}

// startsExhausted says whether the step's agent has already started max_failures times in a row without
// a recorded success: it does not start again.
func (e *Engine) startsExhausted(ic issue, st *Step) bool {
	return st.Agent(e.Config) && ic.rec.FailedStep == st.Name && ic.rec.Failures >= e.Config.MaxFailures
}

// unrecorded sends issue ic to a person when ralph could not record the outcome of a step whose agent
// ran (werr): the record written ahead, with Human Needed and why, or, when GitHub takes no record at all,
// the label and one short comment. The attempt stays counted either way. It returns the issue as written.
func (e *Engine) unrecorded(ctx context.Context, ic issue, r *runner, from workflow.State, werr error) (issue, error) {
	// GitHub's 4xx refuses this record for good (422: too long, say); anything else may pass on the next
	// run, which the attempt counted ahead already bounds.
	var ge *ghapi.Error
	if r.Ahead == nil || !errors.As(werr, &ge) || ge.Status < 400 || ge.Status > 499 {
		return ic, werr
	}
	w := ic.w
	why := cutBytes(Inert(werr.Error()), 300)
	reason := fmt.Sprintf("ralph could not record the outcome of the %s step (GitHub answered: %s); the agent's attempt is counted as a failure and its budget as spent.", r.Step, why)
	rec := r.Ahead.Clone()
	if err := e.table().Flow.Check(ic.state, workflow.Escalate, workflow.HumanNeeded); err == nil || ic.state == workflow.HumanNeeded {
		rec.Before, rec.Reason, rec.State = e.table().RestartState(from), reason, workflow.HumanNeeded
		if serr := w.saveRecord(ctx, ic, rec); serr == nil {
			ic = ic.with(rec)
		}
	}
	body := fmt.Sprintf("### ralph: the outcome of %s could not be recorded, a person is needed\n\n%s\n\nLook at the run's log, then say `/ralph retry` (or run `gh ralph retry %d`).", r.Step, reason, ic.n)
	ic, lerr := w.setState(ctx, ic, workflow.HumanNeeded)
	cerr := w.notice(ctx, fmt.Sprintf("unrecorded %s %d", r.Step, r.Ahead.Runs), body)
	if lerr != nil || cerr != nil {
		e.Log.Warnf("#%d: asking for a person: %v %v", ic.n, lerr, cerr)
	}
	return ic, werr
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
