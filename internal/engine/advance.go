package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// held is the result of a run that found issue n held by another: nothing is done. The issue's state, as
// its label shows it, is read for the report (one request; the holder may be moving it).
func (e *Engine) held(ctx context.Context, n int, h *HeldError) Result {
	msg := fmt.Sprintf("#%d is held by %s; nothing to do", n, h.Holder)
	e.Log.Infof("%s", msg)
	res := Result{Issue: n, Held: true, Message: msg}
	if gi, err := e.GitHub.Issue(ctx, n); err == nil {
		if st := workflow.StatesFromLabels(gi.LabelNames()); len(st) == 1 {
			res.From, res.State = st[0], st[0]
		}
	}
	return res
}

// errLockLost cancels a step whose lease another run took over.
var errLockLost = errors.New("another run took over this issue's lock (the lease expired)")

// dryRun says what Advance would do, writing nothing.
func (e *Engine) dryRun(ic issue) (Result, error) {
	if ic.state == "" {
		if !ic.enrollable() {
			return Result{Issue: ic.n}, ErrNotEnrolled
		}
		if len(ic.stray) > 1 {
			return Result{Issue: ic.n}, inputErrorf("#%d has %d state labels (%s) and no record of ralph's; a real run sends it to a person", ic.n, len(ic.stray), joinStates(ic.stray))
		}
		ic = ic.in(FirstState(e.Config))
	}
	res, _, err := e.step(context.Background(), ic)
	return res, err
}

// Advance performs the next step of issue n: enrollment first when ralph:build is on an issue ralph holds
// no record of.
func (e *Engine) Advance(ctx context.Context, n int) (Result, error) {
	return e.advance(ctx, n, "", nil)
}

// ClosedPull is a pull request that was closed (merged or not), as its event names it.
type ClosedPull struct {
	Number int
	Head   string // its head branch
	// SameRepo: the head branch is in this repository (not a fork's).
	SameRepo bool
}

// PullClosed takes the merge step of issue n for a pull request that was closed, and only when ralph's
// record of n names that pull request: n is enrolled and In Review, and the pull request is the one ralph
// opened from n's branch in this repository. It never enrolls an issue and never runs the agent: anyone
// who can open a pull request can close one, and write what they like in its body.
func (e *Engine) PullClosed(ctx context.Context, n int, pr ClosedPull) (Result, error) {
	return e.advance(ctx, n, "", func(ic issue) string {
		switch {
		case ic.state == "":
			return fmt.Sprintf("#%d is not enrolled (ralph holds no record of it); a pull request enrolls nothing", n)
		case !pr.SameRepo || pr.Head != ic.rec.Branch || (ic.rec.PR != 0 && ic.rec.PR != pr.Number):
			return fmt.Sprintf("pull request #%d (%s) is not the one ralph opened for #%d from %s; nothing to do", pr.Number, pr.Head, n, ic.rec.Branch)
		case ic.state != workflow.InReview:
			return fmt.Sprintf("#%d is %s, not In Review: a closed pull request moves it only from In Review", n, ic.state.Title())
		}
		return ""
	})
}

// advance runs the next step of issue n, under its lock. enroller, when set, is the person who enrolled
// the issue: the run goes on only if they may drive ralph. gate, when set, is asked once the issue and its
// record are read: a reason not to go on, or "" to go on; an issue ralph holds no record of passes only a
// nil gate, which enrolls it.
func (e *Engine) advance(ctx context.Context, n int, enroller string, gate func(issue) string) (Result, error) {
	if err := checkNumber(n); err != nil {
		return Result{Issue: n}, err
	}
	if e.DryRun {
		ic, why, err := e.admit(ctx, n, enroller, gate)
		if err != nil {
			return Result{Issue: n}, err
		}
		if why != "" {
			return Result{Issue: n, From: ic.state, State: ic.state, Message: why}, nil
		}
		return e.dryRun(ic)
	}
	lease, release, err := e.acquire(ctx, n)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			return e.held(ctx, n, held), nil
		}
		return Result{Issue: n}, fmt.Errorf("locking #%d: %w", n, err)
	}
	defer release()
	// Read under the lock: a run that held it until a moment ago may have moved the issue on.
	ic, why, err := e.admit(ctx, n, enroller, gate)
	if err != nil {
		return Result{Issue: n}, err
	}
	if t := lease.TookOver(); t != "" {
		ic.takeover = t
		e.Log.Warnf("#%d: took over a stale lock held by %s", n, t)
	}
	if why != "" {
		e.Log.Infof("%s", why)
		res := Result{Issue: n, From: ic.state, State: ic.state, Message: why}
		if ic.state != "" {
			_, err = ic.w.flush(ctx, ic)
		}
		return res, err
	}
	if ic.state == "" {
		switch {
		case !ic.enrollable():
			return Result{Issue: n}, ErrNotEnrolled
		case len(ic.stray) > 1:
			ic, err = e.reader().confused(ctx, ic)
		default:
			ic, err = e.reader().enroll(ic)
		}
		if err != nil {
			return Result{Issue: n}, err
		}
	}
	return e.take(ctx, ic, lease)
}

// take takes the issue's next step under lease, which cancels the step when another run takes the lock
// over, and writes what is left to write.
func (e *Engine) take(ctx context.Context, ic issue, lease Lease) (Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-lease.Lost():
			cancel(errLockLost)
		case <-ctx.Done():
		}
	}()
	if e.Labeler != nil && ic.enrollable() {
		var lerr error
		if ic.unowned, ic.labeler, lerr = e.Labeler(ctx, ic.gh); lerr != nil {
			e.Log.Warnf("#%d: %v", ic.n, lerr)
		}
	}
	ic = e.goesOn(ctx, ic)
	res, ic, err := e.step(ctx, ic)
	if err == nil && ic.state != "" {
		ic, err = ic.w.flush(ctx, ic)
	}
	res.Total = ic.rec.Usage
	return res, err
}

// admit reads issue n (with the enroller's role, when there is one) and says whether the run may go on:
// the enroller may drive ralph, and gate has no reason against it (why).
func (e *Engine) admit(ctx context.Context, n int, enroller string, gate func(issue) string) (ic issue, why string, err error) {
	ic, err = e.reader().load(ctx, n, enroller)
	if err != nil {
		return issue{}, "", err
	}
	if enroller != "" {
		if err := ic.people.authorize(ctx, ic.n, enroller, ActEnroll); err != nil {
			return ic, "", err
		}
	}
	if gate != nil {
		why = gate(ic)
	}
	return ic, why, nil
}
