package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Command is a person's command on an issue: `/ralph approve|reject|retry` in a comment, or
// `gh ralph approve|reject|retry`.
type Command struct {
	Action Action
	Issue  int
	Login  string
	Reason string // a rejection's; a fix's text
	// Advance: take the step the command makes ready, in the same call.
	Advance bool
}

// Act carries out a person's command and then, with c.Advance, the step it leaves ready to run: the one
// engine call behind both doors. The command itself is bookkeeping; step is the next step's result (nil
// when none ran), and err the command's or that step's.
func (e *Engine) Act(ctx context.Context, c Command) (res Result, step *Result, err error) {
	switch c.Action {
	case ActApprove:
		res, err = e.Approve(ctx, c.Issue, c.Login)
	case ActReject:
		res, err = e.Reject(ctx, c.Issue, c.Login, c.Reason)
	case ActRetry:
		res, err = e.Retry(ctx, c.Issue, c.Login)
	case ActFix:
		res, err = e.Fix(ctx, c.Issue, c.Login, FixRequest{Cause: FixComment, Text: c.Reason})
	default:
		return Result{Issue: c.Issue}, nil, inputErrorf("%q is no command of a person's: approve, reject, retry or fix", c.Action)
	}
	if err != nil || !c.Advance || !res.Continue || e.DryRun {
		return res, nil, err
	}
	next, err := e.Advance(ctx, c.Issue)
	return res, &next, err
}

// Enroll records that login added ralph:build, then advances the issue one step. The caller has seen the
// label added; the enrollment counts only if login may drive ralph.
func (e *Engine) Enroll(ctx context.Context, n int, login string) (Result, error) {
	return e.advance(ctx, n, login, nil)
}

// Approve approves the plan of an issue in Plan in Review, or the split of an issue whose triage's split
// waits for a person (split.approve).
func (e *Engine) Approve(ctx context.Context, n int, login string) (Result, error) {
	return e.person(ctx, n, login, ActApprove, func(ic *issue, rec *Record) (Outcome, error) {
		if ps := rec.Split; ic.state == workflow.Backlog && ps != nil {
			if ps.ApprovedBy != "" {
				return Outcome{}, inputErrorf("#%d's split was approved by @%s already; the next run creates its sub-issues", n, ps.ApprovedBy)
			}
			ps.ApprovedBy = login // the next run creates the sub-issues (the triage step, with no agent)
			return Outcome{}, nil
		}
		if ic.state != workflow.PlanInReview {
			return Outcome{}, inputErrorf("#%d is %s, not Plan in Review: there is no plan to approve", n, ic.state.Title())
		}
		rec.Feedback = ""
		rec.setArtifact(reviewDocument.Kind, Artifact{Verdict: "APPROVED by @" + login})
		return Outcome{To: workflow.InProgress}, nil
	})
}

// Reject sends the plan back with the person's reason, which reaches the next plan step's prompt; or a
// split that waits for approval back to triage, the reason in the next triage's prompt.
func (e *Engine) Reject(ctx context.Context, n int, login, reason string) (Result, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return Result{Issue: n}, inputErrorf("a rejection needs a reason: `/ralph reject <why>` or `gh ralph reject %d --reason \"…\"`", n)
	}
	return e.person(ctx, n, login, ActReject, func(ic *issue, rec *Record) (Outcome, error) {
		if ic.state == workflow.Backlog && rec.Split != nil {
			// Nothing was created: the issue is triaged again, with the reason in the triage's prompt.
			rec.Split = nil
			rec.Feedback = fmt.Sprintf("@%s rejected the split: %s", login, reason)
			return Outcome{}, nil
		}
		if ic.state != workflow.PlanInReview {
			return Outcome{}, inputErrorf("#%d is %s, not Plan in Review: there is no plan to reject", n, ic.state.Title())
		}
		rec.setArtifact(reviewDocument.Kind, Artifact{Verdict: "NEEDS_ITERATION from @" + login})
		return e.runner(ic).sendBack(ic.n, rec, fmt.Sprintf("@%s rejected the plan: %s", login, reason), "People sent the plan back"), nil
	})
}

// Retry takes an issue out of Human Needed, back to the state it was in before.
func (e *Engine) Retry(ctx context.Context, n int, login string) (Result, error) {
	return e.person(ctx, n, login, ActRetry, func(ic *issue, rec *Record) (Outcome, error) {
		if ic.state != workflow.HumanNeeded {
			return Outcome{}, inputErrorf("#%d is %s, not Human Needed: there is nothing to retry", n, ic.state.Title())
		}
		to := rec.Before
		if !to.Valid() || to == workflow.HumanNeeded {
			to = FirstState(e.Config)
		}
		to = restartState(to)
		rec.FailedStep, rec.Failures, rec.Reason = "", 0, ""
		rec.CIDigest = "" // a person looked: the same failure may be fixed again
		for _, st := range steps {
			if st.From == to && st.Retry != nil {
				st.Retry(rec, e.Config) // what each step that starts there clears for a person's retry
			}
		}
		return Outcome{To: to}, nil
	})
}

// notEnrolled is a person's action on an issue ralph holds no record of.
func notEnrolled(ic *issue) error {
	if len(ic.stray) == 0 {
		return inputErrorf("#%d is not enrolled: add the %s label first", ic.n, workflow.LabelBuild)
	}
	return inputErrorf("#%d is not enrolled: ralph holds no record of it (a state label alone enrolls nothing); add the %s label first", ic.n, workflow.LabelBuild)
}

// Fix sends an issue in In Review back to work with a fix phase made from req. A review or a comment counts
// only from someone with write access (login); failing checks count only on the commit ralph last pushed.
func (e *Engine) Fix(ctx context.Context, n int, login string, req FixRequest) (Result, error) {
	change := func(ic *issue, rec *Record) (Outcome, error) { return e.runner(ic).fix(ctx, rec, login, req) }
	if req.Cause == FixCI {
		// No person asks: the checks' result on ralph's own commit does, which fix checks.
		return e.personAs(ctx, n, login, ActFix, false, change)
	}
	return e.person(ctx, n, login, ActFix, change)
}

// person runs a person's action: authorize, lock, read, check, change, record.
func (e *Engine) person(ctx context.Context, n int, login string, act Action, change func(ic *issue, rec *Record) (Outcome, error)) (Result, error) {
	return e.personAs(ctx, n, login, act, true, change)
}

// personAs is person; authorize false is for what no person asks (checks that failed on ralph's commit),
// whose change checks what it acts on itself.
func (e *Engine) personAs(ctx context.Context, n int, login string, act Action, authorize bool, change func(ic *issue, rec *Record) (Outcome, error)) (Result, error) {
	if err := checkNumber(n); err != nil {
		return Result{Issue: n}, err
	}
	if authorize {
		if err := e.people().authorize(ctx, n, login, act); err != nil {
			return Result{Issue: n}, err
		}
	}
	if e.DryRun {
		ic, err := e.reader().load(ctx, n, "")
		if err != nil {
			return Result{Issue: n}, err
		}
		if ic.state == "" {
			return Result{Issue: n}, notEnrolled(ic)
		}
		return Result{Issue: n, From: ic.state, State: ic.state, Message: fmt.Sprintf("would %s #%d", act, n)}, nil
	}
	_, release, err := e.acquire(ctx, n)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			return Result{Issue: n, Held: true}, fmt.Errorf("#%d is held by %s; try again when that run ends", n, held.Holder)
		}
		return Result{Issue: n}, err
	}
	defer release()
	ic, err := e.reader().load(ctx, n, "")
	if err != nil {
		return Result{Issue: n}, err
	}
	if ic.state == "" {
		return Result{Issue: n}, notEnrolled(ic)
	}
	from := ic.state
	draft := ic.rec.clone()
	out, err := change(ic, &draft)
	if err != nil {
		return Result{Issue: n, From: from, State: ic.state}, err
	}
	out.Record = &draft
	st, err := settle(ic.rec, settling{Step: workflow.Event(act), From: from, State: ic.state, Out: out, By: login, At: e.now(), URL: e.Origin.URL})
	if err == nil {
		err = e.writer(ic).write(context.WithoutCancel(ctx), st)
	}
	if err != nil {
		return Result{Issue: n, From: from, State: ic.state}, err
	}
	res := Result{Issue: n, Step: workflow.Event(act), From: from, State: st.To, PRURL: st.Record.PRURL, Message: st.Message}
	res.Paused, res.Continue = e.next(ic)
	return res, nil
}
