package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// fail leaves the issue in the state its step started from, counts the failure, and sends the issue to Human
// Needed when the same step has now failed max_failures times in a row. An interrupted run (the workflow
// was cancelled) is recorded but not counted. Its writes use a context of their own, so that they happen
// even when the run's context is what ended.
func (e *Engine) fail(ctx context.Context, ic *issue, ev workflow.Event, from workflow.State, serr *StepError) (Result, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := restartState(from)
	var be *budgetError
	if errors.As(serr, &be) {
		e.Log.Warnf("#%d: %s stopped: %v", ic.n, ev, be)
	} else {
		e.Log.Warnf("#%d: %v", ic.n, serr)
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: start, Message: e.redact(serr.Error())}
	ic.to = ""
	if ic.state != start {
		if err := workflow.Check(ic.state, workflow.Abort, start); err != nil {
			return res, errors.Join(serr, err)
		}
		ic.to = start
	}
	e.pushCommitted(cctx, ic)
	if ic.saved != nil {
		failed, failures := ic.rec.FailedStep, ic.rec.Failures
		ic.rec = *ic.saved
		ic.rec.FailedStep, ic.rec.Failures = failed, failures
	}
	e.explainTurnLimit(ic, serr)
	if be != nil {
		return e.budgetReached(cctx, ic, ev, from, start, be, res)
	}
	if cause := context.Cause(ctx); cause != nil {
		reason := "the run was interrupted: " + cause.Error()
		if err := e.commit(cctx, ic, Run{Step: ev, From: from, To: start, At: e.now(), URL: e.Run.URL, Outcome: "interrupted", Message: reason}); err != nil {
			return res, errors.Join(serr, err)
		}
		return res, serr
	}
	if ic.rec.FailedStep == ev {
		ic.rec.Failures++
	} else {
		ic.rec.FailedStep, ic.rec.Failures = ev, 1
	}
	var body, reason string
	var err error
	if ic.rec.Failures >= e.Config.MaxFailures {
		reason = fmt.Sprintf("The %s step failed %d times in a row; the last time: %s.", ev, ic.rec.Failures, Inert(serr.Reason))
		res.State, res.Paused = workflow.HumanNeeded, true
		body = fmt.Sprintf("### ralph: %s failed, a person is needed\n\n%s\n\n%s\nWhat was produced before the failure is kept on the branch `%s`. Fix the cause (the issue, the config, the agent), then say `/ralph retry` (or run `gh ralph retry %d`) to go on from %s.",
			ev, reason, detail(serr), ic.rec.Branch, ic.n, start.Title())
	} else {
		res.Continue = true
		body = fmt.Sprintf("### ralph: %s failed (%d of %d)\n\n%s.\n\n%s\nThe issue stays in %s and ralph tries again on the next run; after %d failures in a row it stops and asks for a person. To retry now, re-run the workflow or run `gh ralph advance %d`.",
			ev, ic.rec.Failures, e.Config.MaxFailures, capitalize(Inert(serr.Reason)), detail(serr), start.Title(), e.Config.MaxFailures, ic.n)
	}
	if res.State == workflow.HumanNeeded {
		err = e.needsPerson(cctx, ic, start, reason, "failed "+string(ev), e.redact(body))
	} else {
		err = e.notice(cctx, ic, fmt.Sprintf("failed %s %d", ev, ic.rec.Runs), e.redact(body))
	}
	if err != nil {
		return res, errors.Join(serr, err)
	}
	if err := e.commit(cctx, ic, Run{Step: ev, From: from, To: res.State, At: e.now(), URL: e.Run.URL, Outcome: "failed", Message: e.redact(serr.Reason)}); err != nil {
		return res, errors.Join(serr, err)
	}
	return res, serr
}

// pushCommitted pushes a commit ralph built and checked in this step but had not pushed when the step
// stopped, so no finished work is lost. Nothing else is ever pushed: not the agent's own commits, whatever
// their messages say, and not a ref the agent moved.
func (e *Engine) pushCommitted(ctx context.Context, ic *issue) {
	ws := ic.ws
	if ws == nil || ws.Built() == "" {
		return
	}
	if err := push(ctx, ic, ws); err != nil {
		e.Log.Warnf("#%d: pushing the work committed before the stop: %v", ic.n, err)
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
	if serr.Err != nil {
		fmt.Fprintf(&b, "Error: `%s`\n\n", strings.ReplaceAll(Inert(serr.Err.Error()), "`", "'"))
	}
	var ae *agentFailure
	if errors.As(serr.Err, &ae) && ae.tail != "" {
		fmt.Fprintf(&b, "<details><summary>Last output</summary>\n\n%s\n</details>\n\n", fence("text", InertText(ae.tail)))
	}
	return b.String()
}

// agentFailure carries the tail of the agent's (or verify command's) output into the failure comment.
type agentFailure struct {
	err  error
	tail string
}

func (a *agentFailure) Error() string { return a.err.Error() }

func (a *agentFailure) Unwrap() error { return a.err }
