package engine

import (
	"context"
	"errors"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// fail records a failed step of issue ic (settleFailure says how), and returns the issue as written. Its
// writes use a context of their own, so that they happen even when the run's context is what ended.
func (e *Engine) fail(ctx context.Context, ic issue, r *runner, from workflow.State, serr *StepError) (Result, issue, error) {
	ev := r.Step
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var be *session.BudgetError
	if errors.As(serr, &be) {
		e.Log.Warnf("#%d: %s stopped: %v", ic.n, ev, be)
	} else {
		e.Log.Warnf("#%d: %v", ic.n, serr)
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: e.table().RestartState(from), Message: r.Session().Redact(serr.Error()), Refused: r.Refused}
	// A push a repository rule refused (GH013) is not made again: the same push meets the same rule.
	if rej := (*git.PushRejectedError)(nil); !errors.As(serr, &rej) || len(rej.Rules) == 0 {
		if err := r.PushCommitted(cctx); err != nil {
			e.Log.Warnf("#%d: pushing the work committed before the stop: %v", ic.n, err)
		}
	}
	r.ExplainTurnLimit(serr)
	f, err := settleFailure(e.table(), ic.rec, failing{Issue: ic.n, Step: ev, From: from, State: ic.state, Err: serr,
		Interrupted: context.Cause(ctx), MaxFailures: e.Config.MaxFailures, At: e.now(), URL: e.Origin.URL, Usage: r.Usage, Refused: r.Refused, Redact: r.Session().Redact})
	if err != nil {
		return res, ic, errors.Join(serr, err)
	}
	if ic, err = ic.w.write(cctx, ic, f.settled); err != nil {
		ic, err = e.unrecorded(cctx, ic, r, from, err)
		if be != nil {
			return res, ic, err
		}
		return res, ic, errors.Join(serr, err)
	}
	res.State, res.Paused, res.Continue, res.Budget = f.To, f.Paused, f.Continue, f.Budget
	if be != nil {
		res.Message = f.Message
		return res, ic, nil
	}
	res.Recorded = true // the record says what comes next: a retry, or a person
	return res, ic, serr
}
