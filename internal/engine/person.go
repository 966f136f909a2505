package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/steps"
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
	// Terminal: the command came from gh ralph, not from a comment, so no one reading the issue has seen
	// its reason: ralph posts it (quoted inert) with the command.
	Terminal bool
}

// Act carries out a person's command and then, with c.Advance, the step it leaves ready to run: the one
// engine call behind both doors, under one lock and one read of the issue. The command itself is
// bookkeeping, recorded before the step starts (a step that stops does not lose it); step is the next
// step's result (nil when none ran), and err the command's or that step's.
func (e *Engine) Act(ctx context.Context, c Command) (res Result, step *Result, err error) {
	var p personal
	switch c.Action {
	case ActApprove:
		p = approval(c.Issue, c.Login)
	case ActReject:
		p, err = rejection(c.Issue, c.Login, c.Reason)
	case ActRetry:
		p = retrial(c.Issue, c.Login)
	case ActFix:
		p = fixRequest(ctx, c.Login, FixRequest{Cause: FixComment, Text: c.Reason})
	default:
		return Result{Issue: c.Issue}, nil, inputErrorf("%q is no command of a person's: approve, reject, retry or fix", c.Action)
	}
	if err != nil {
		return Result{Issue: c.Issue}, nil, err
	}
	if reason := strings.TrimSpace(c.Reason); c.Terminal && reason != "" {
		p.change = withReason(p.change, c.Action, c.Login, reason)
	}
	return e.person(ctx, c.Issue, p, c.Advance)
}

// withReason is change that also posts the person's reason on the issue, once, as ralph's comment: the
// login is ralph's to name (in a code span, which mentions no one), the reason is the person's and quoted
// inert.
func withReason(change func(*runner, *Record) (Outcome, error), act Action, login, reason string) func(*runner, *Record) (Outcome, error) {
	return func(r *runner, rec *Record) (Outcome, error) {
		runs := rec.Runs
		out, err := change(r, rec)
		if err != nil || out.Notice != nil {
			return out, err
		}
		what := map[Action]string{ActReject: "sent the plan back", ActFix: "asked for a fix"}[act]
		if what == "" {
			what = string(act)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "### ralph: `@%s` %s (`gh ralph %s`)\n\n", login, what, act)
		for _, line := range strings.Split(reason, "\n") {
			fmt.Fprintf(&b, "> %s\n", Inert(line))
		}
		out.Notice = &Notice{Key: fmt.Sprintf("%s %d", act, runs), Body: b.String()}
		return out, nil
	}
}

// personal is a person's command (or the checks'): who asks, whether they must be someone with write access,
// and what it changes of the record.
type personal struct {
	act       Action
	login     string
	authorize bool
	change    func(r *runner, rec *Record) (Outcome, error)
}

// Enroll records that login added ralph:build, then advances the issue one step. The caller has seen the
// label added; the enrollment counts only if login may drive ralph.
func (e *Engine) Enroll(ctx context.Context, n int, login string) (Result, error) {
	return e.advance(ctx, n, login, nil)
}

// Approve approves the plan of an issue in Plan in Review, or the split of an issue whose triage's split
// waits for a person (split.approve).
func (e *Engine) Approve(ctx context.Context, n int, login string) (Result, error) {
	res, _, err := e.person(ctx, n, approval(n, login), false)
	return res, err
}

func approval(n int, login string) personal {
	return personal{act: ActApprove, login: login, authorize: true, change: func(r *runner, rec *Record) (Outcome, error) {
		ic := r.ic
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
		rec.SetArtifact(steps.ReviewDocument.Kind, Artifact{Verdict: "APPROVED by @" + login})
		return Outcome{To: workflow.InProgress}, nil
	}}
}

// Reject sends the plan back with the person's reason, which reaches the next plan step's prompt; or a
// split that waits for approval back to triage, the reason in the next triage's prompt.
func (e *Engine) Reject(ctx context.Context, n int, login, reason string) (Result, error) {
	p, err := rejection(n, login, reason)
	if err != nil {
		return Result{Issue: n}, err
	}
	res, _, err := e.person(ctx, n, p, false)
	return res, err
}

func rejection(n int, login, reason string) (personal, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return personal{}, inputErrorf("a rejection needs a reason: `/ralph reject <why>` or `gh ralph reject %d --reason \"…\"`", n)
	}
	return personal{act: ActReject, login: login, authorize: true, change: func(r *runner, rec *Record) (Outcome, error) {
		ic := r.ic
		if ic.state == workflow.Backlog && rec.Split != nil {
			// Nothing was created: the issue is triaged again, with the reason in the triage's prompt.
			rec.Split = nil
			rec.Feedback = fmt.Sprintf("@%s rejected the split: %s", login, reason)
			return Outcome{}, nil
		}
		if ic.state != workflow.PlanInReview {
			return Outcome{}, inputErrorf("#%d is %s, not Plan in Review: there is no plan to reject", n, ic.state.Title())
		}
		rec.SetArtifact(steps.ReviewDocument.Kind, Artifact{Verdict: "NEEDS_ITERATION from @" + login})
		return r.SendBack(ic.n, rec, fmt.Sprintf("@%s rejected the plan: %s", login, reason), "People sent the plan back"), nil
	}}, nil
}

// Retry takes an issue out of Human Needed, back to the state it was in before.
func (e *Engine) Retry(ctx context.Context, n int, login string) (Result, error) {
	res, _, err := e.person(ctx, n, retrial(n, login), false)
	return res, err
}

func retrial(n int, login string) personal {
	return personal{act: ActRetry, login: login, authorize: true, change: func(r *runner, rec *Record) (Outcome, error) {
		ic := r.ic
		if ic.state != workflow.HumanNeeded {
			return Outcome{}, inputErrorf("#%d is %s, not Human Needed: there is nothing to retry", n, ic.state.Title())
		}
		to := rec.Before
		if !to.Valid() || to == workflow.HumanNeeded {
			to = FirstState(r.cfg)
		}
		to = ic.w.steps.RestartState(to)
		rec.FailedStep, rec.Failures, rec.Reason = "", 0, ""
		rec.CIDigest = "" // a person looked: the same failure may be fixed again
		for _, st := range ic.w.steps.Steps() {
			if st.From == to && st.Retry != nil {
				st.Retry(rec, r.cfg) // what each step that starts there clears for a person's retry
			}
		}
		return Outcome{To: to}, nil
	}}
}

// notEnrolled is a person's action on an issue ralph holds no record of.
func notEnrolled(ic issue) error {
	if len(ic.stray) == 0 {
		return inputErrorf("#%d is not enrolled: add the %s label first", ic.n, workflow.LabelBuild)
	}
	return inputErrorf("#%d is not enrolled: ralph holds no record of it (a state label alone enrolls nothing); add the %s label first", ic.n, workflow.LabelBuild)
}

// Fix sends an issue in In Review back to work with a fix phase made from req. A review or a comment counts
// only from someone with write access (login); failing checks count only on the commit ralph last pushed.
func (e *Engine) Fix(ctx context.Context, n int, login string, req FixRequest) (Result, error) {
	res, _, err := e.person(ctx, n, fixRequest(ctx, login, req), false)
	return res, err
}

func fixRequest(ctx context.Context, login string, req FixRequest) personal {
	return personal{act: ActFix, login: login,
		// Failing checks: no person asks, the checks' result on ralph's own commit does, which fix checks.
		authorize: req.Cause != FixCI,
		change:    func(r *runner, rec *Record) (Outcome, error) { return r.Fix(ctx, rec, login, req) }}
}

// person runs a person's command: authorize, lock, read, check, change, record; then, with advance and
// when the command leaves a step ready, that step, under the same lock and on the same read of the issue.
func (e *Engine) person(ctx context.Context, n int, p personal, advance bool) (Result, *Result, error) {
	act, login, change := p.act, p.login, p.change
	if err := checkNumber(n); err != nil {
		return Result{Issue: n}, nil, err
	}
	// One people for the run: the person asked about here is not asked about again when the issue is read.
	ppl := e.people()
	read := e.reader()
	read.people = func() *people { return ppl }
	if p.authorize {
		if err := ppl.authorize(ctx, n, login, act); err != nil {
			return Result{Issue: n}, nil, err
		}
	}
	if e.DryRun {
		ic, err := read.load(ctx, n, "")
		if err != nil {
			return Result{Issue: n}, nil, err
		}
		if ic.state == "" {
			return Result{Issue: n}, nil, notEnrolled(ic)
		}
		return Result{Issue: n, From: ic.state, State: ic.state, Message: fmt.Sprintf("would %s #%d", act, n)}, nil, nil
	}
	lease, release, err := e.acquire(ctx, n)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			return Result{Issue: n, Held: true}, nil, fmt.Errorf("#%d is held by %s; try again when that run ends", n, held.Holder)
		}
		return Result{Issue: n}, nil, err
	}
	defer release()
	ic, err := read.load(ctx, n, "")
	if err != nil {
		return Result{Issue: n}, nil, err
	}
	if ic.state == "" {
		return Result{Issue: n}, nil, notEnrolled(ic)
	}
	from := ic.state
	draft := ic.rec.Clone()
	out, err := change(e.runner(ic, ""), &draft)
	if err != nil {
		return Result{Issue: n, From: from, State: ic.state}, nil, err
	}
	out.Record = &draft
	st, err := settle(e.table(), ic.rec, settling{Step: act.Event(), From: from, State: ic.state, Out: out, By: login, At: e.now(), URL: e.Origin.URL})
	if err == nil {
		ic, err = ic.w.write(context.WithoutCancel(ctx), ic, st)
	}
	if err != nil {
		return Result{Issue: n, From: from, State: ic.state}, nil, err
	}
	res := Result{Issue: n, Step: act.Event(), From: from, State: st.To, PRURL: st.Record.PRURL, Message: st.Message}
	res.Paused, res.Continue = e.next(ic)
	if !advance || !res.Continue {
		return res, nil, nil
	}
	next, err := e.take(ctx, ic, lease)
	return res, &next, err
}
