package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// fail records a failed step (settleFailure says how). Its writes use a context of their own, so that they
// happen even when the run's context is what ended.
func (e *Engine) fail(ctx context.Context, r *runner, from workflow.State, serr *StepError) (Result, error) {
	ic, ev := r.ic, r.step
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var be *session.BudgetError
	if errors.As(serr, &be) {
		e.Log.Warnf("#%d: %s stopped: %v", ic.n, ev, be)
	} else {
		e.Log.Warnf("#%d: %v", ic.n, serr)
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: e.table().restartState(from), Message: r.session.Redact(serr.Error()), Refused: r.refused}
	// A push a repository rule refused (GH013) is not made again: the same push meets the same rule.
	if rej := (*git.PushRejectedError)(nil); !errors.As(serr, &rej) || len(rej.Rules) == 0 {
		e.pushCommitted(cctx, r)
	}
	r.explainTurnLimit(serr)
	f, err := e.table().settleFailure(ic.rec, failing{Issue: ic.n, Step: ev, From: from, State: ic.state, Err: serr,
		Interrupted: context.Cause(ctx), MaxFailures: e.Config.MaxFailures, At: e.now(), URL: e.Origin.URL, Usage: r.usage, Refused: r.refused, Redact: r.session.Redact})
	if err != nil {
		return res, errors.Join(serr, err)
	}
	if err := r.w.write(cctx, f.settled); err != nil {
		err = e.unrecorded(cctx, r, from, err)
		if be != nil {
			return res, err
		}
		return res, errors.Join(serr, err)
	}
	res.State, res.Paused, res.Continue, res.Budget = f.To, f.Paused, f.Continue, f.Budget
	if be != nil {
		res.Message = f.Message
		return res, nil
	}
	return res, serr
}

// pushCommitted pushes a commit ralph built and checked in this step but had not pushed when the step
// stopped, so no finished work is lost. Nothing else is ever pushed: not the agent's own commits, whatever
// their messages say, and not a ref the agent moved.
func (e *Engine) pushCommitted(ctx context.Context, r *runner) {
	for _, ws := range []*workspace.Workspace{r.ws, r.docs} {
		if ws == nil || ws.Built() == "" {
			continue
		}
		if err := push(ctx, r.ic, ws); err != nil {
			e.Log.Warnf("#%d: pushing the work committed before the stop: %v", r.ic.n, err)
		}
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func detail(serr *StepError) string {
	var b strings.Builder
	if serr.Err != nil && !restated(serr.Err) {
		fmt.Fprintf(&b, "Error: `%s`\n\n", strings.ReplaceAll(Inert(serr.Err.Error()), "`", "'"))
	}
	var ae *session.AgentFailure
	if errors.As(serr.Err, &ae) && ae.Tail != "" {
		fmt.Fprintf(&b, "<details><summary>Last output</summary>\n\n%s\n</details>\n\n", fence("text", InertText(ae.Tail)))
	}
	return b.String()
}

// restated reports whether err is an agent failure its step's reason already says.
func restated(err error) bool {
	var ae *session.AgentFailure
	return errors.As(err, &ae) && ae.Restated
}
