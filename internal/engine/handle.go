package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// What else a door asks of the engine, besides a person's actions (ActEnroll, ActApprove, …): Action is
// the one vocabulary of the doors' requests.
const (
	ActAdvance Action = "advance" // the issue's next step
	ActMerge   Action = "merge"   // a pull request was closed: Request.Pull
	ActStatus  Action = "status"  // reply on the issue with where it is
	// ActFinish is a run ralph dispatched to finish a step a run of its could not (Result.Finish): it
	// first does what that run carried (a person's command that did not take effect), then advances.
	ActFinish Action = "finish"
)

// Request is what a door asks of the engine for one issue. Nothing in it is trusted: the engine checks the
// actor's permission, and the pull request, branch and commit against its record.
type Request struct {
	Action Action `json:"command"`
	Issue  int    `json:"-"`
	Actor  string `json:"actor,omitempty"`  // the person whose action this is
	Reason string `json:"reason,omitempty"` // a rejection's reason; a fix's text
	// Pull is the closed pull request of ActMerge.
	Pull ClosedPull `json:"-"`
	// Fix is what ActFix knows of its cause (nil: a person's `/ralph fix`); its Text is Reason.
	Fix *FixRequest `json:"fix,omitempty"`
	// Terminal: the request comes from gh ralph, not from a comment, so no one reading the issue has seen
	// its reason: ralph posts it (quoted inert) with the command.
	Terminal bool `json:"-"`
	// CommandOnly: a person's command is recorded and the step it makes ready is left to a later run
	// (gh ralph without --advance); otherwise the same call takes that step.
	CommandOnly bool `json:"-"`
	// Finishable: the door dispatches a run to finish a step GitHub failed for a while (the Action with
	// chain: true): when the request ends on such a failure, the engine counts it (Finishing) and sets
	// Result.Finish, or says in Result.Unfinished why no run finishes it.
	Finishable bool `json:"-"`
}

// Handle does what q asks for issue q.Issue: the one door into the engine for a single issue. Its Result
// says what was done, whether a failure was recorded (Recorded), and whether the door dispatches a run
// to finish the step (Finish).
func (e *Engine) Handle(ctx context.Context, q Request) (Result, error) {
	var res Result
	var err error
	undone := false // q did not take effect: its run could not record it
	if q.Action == ActFinish {
		var todo *Request
		res, todo, err = e.finishRun(ctx, q.Issue)
		undone = todo != nil
		if todo != nil {
			todo.Finishable = q.Finishable
			q = *todo
		}
	} else {
		res, undone, err = e.handle(ctx, q)
	}
	res.Recorded = res.Recorded && err != nil
	if err != nil && q.Finishable && !e.DryRun && !res.Continue && !slices.Contains(res.Dispatch, q.Issue) && !res.Recorded && Transient(err) {
		carry := ""
		if undone {
			b, _ := json.Marshal(q)
			carry = string(b)
		}
		res.Finish, res.Unfinished = e.finishing(ctx, res, q, carry, err)
	}
	return res, err
}

// handle does one request that is not ActFinish. undone: it is a person's command that did not take
// effect (its run could not record it), which the run that finishes this one carries out.
func (e *Engine) handle(ctx context.Context, q Request) (res Result, undone bool, err error) {
	n := q.Issue
	took := true // the person's command, if any, was recorded
	switch q.Action {
	case ActEnroll:
		res, err = e.Enroll(ctx, n, q.Actor)
	case ActAdvance:
		res, err = e.Advance(ctx, n)
	case ActMerge:
		res, err = e.PullClosed(ctx, n, q.Pull)
	case ActApprove, ActRetry, ActReject:
		res, took, err = e.act(ctx, q)
	case ActFix:
		if q.Terminal { // gh ralph fix: a person's command, as approve is
			res, took, err = e.act(ctx, q)
			break
		}
		res, err = e.fixRequested(ctx, q)
		took = res.Step != ""
	case ActStatus:
		var rec Record
		rec, err = e.Status(ctx, n, true)
		res = Result{Issue: n, From: rec.State, State: rec.State, Message: "status: replied on the issue with where it is"}
	default:
		return Result{Issue: n}, false, inputErrorf("unknown command %q: use advance, sweep, approve, reject, retry, fix, status or finish", q.Action)
	}
	return res, err != nil && !took, err
}

// act carries out a person's command (Act), and then, unless q.CommandOnly, the step it leaves ready:
// the command is bookkeeping, and the run then takes the next step, as enrollment does. res is the step's
// result when one ran, with the command's in res.Acted; took says the command was recorded.
func (e *Engine) act(ctx context.Context, q Request) (res Result, took bool, err error) {
	res, step, err := e.Act(ctx, Command{Action: q.Action, Issue: q.Issue, Login: q.Actor, Reason: q.Reason, Advance: !q.CommandOnly, Terminal: q.Terminal})
	took = res.Step != ""
	if step != nil {
		acted := res
		res = *step
		res.Acted = &acted
	}
	return res, took, err
}

// fixRequested hands a fix request to the fix step: the person (q.Actor, whose write access is checked
// for a review or a comment), their text (q.Reason, data), and the cause (q.Fix: the pull request and
// commit the event names, checked against the record). An event's fix (a review, checks) that leaves
// ralph nothing to fix (checks of a commit that is not ralph's last, an issue not In Review) ends quietly.
func (e *Engine) fixRequested(ctx context.Context, q Request) (Result, error) {
	req := FixRequest{Cause: FixComment}
	if f := q.Fix; f != nil {
		req.Cause, req.Pull, req.HeadSHA = f.Cause, f.Pull, f.HeadSHA
	}
	req.Text = q.Reason
	res, err := e.Fix(ctx, q.Issue, q.Actor, req)
	var input *InputError
	if errors.As(err, &input) && req.Cause != FixComment {
		return Result{Issue: q.Issue, Message: "nothing to fix: " + input.Error()}, nil
	}
	return res, err
}

// finishRun does what the run that dispatched this one carried for issue n (Carried), if anything, and
// then, when that did nothing (it had taken effect after all, or no longer applies), advances the issue.
// todo is the carried request when it is what ran.
func (e *Engine) finishRun(ctx context.Context, n int) (res Result, todo *Request, err error) {
	c, err := e.Carried(ctx, n)
	if err != nil {
		return Result{Issue: n}, nil, fmt.Errorf("reading what the run to finish was left to do: %w", err)
	}
	var q Request
	if c != "" && json.Unmarshal([]byte(c), &q) == nil && carryable(q.Action) {
		q.Issue = n
		e.Log.Infof("#%d: finishing @%s's %s, which the run before could not record", n, q.Actor, q.Action)
		res, undone, err := e.handle(ctx, q)
		if err == nil && res.Step != "" || err != nil && !doneWith(err) {
			if undone {
				return res, &q, err
			}
			return res, nil, err
		}
		why := "—"
		if err != nil {
			why = err.Error()
		}
		e.Log.Infof("#%d: %s: nothing left of it to do (%v); advancing", n, q.Action, why)
	}
	res, _, err = e.handle(ctx, Request{Action: ActAdvance, Issue: n})
	return res, nil, err
}

// doneWith says whether err leaves nothing of a carried command to do: it no longer applies, its person may
// not do it (said on the issue), or the issue is no longer enrolled.
func doneWith(err error) bool {
	var input *InputError
	var refused *RefusedError
	return errors.As(err, &input) || errors.As(err, &refused) || errors.Is(err, ErrNotEnrolled)
}

// carryable says whether a is a command whose run carries it to the run that finishes it when it could not
// record it.
func carryable(a Action) bool {
	return a == ActApprove || a == ActReject || a == ActRetry || a == ActFix
}

// finishing counts a run to finish the step of res.Issue that failed on err, GitHub failing for a while
// (at most MaxFinishing in a row), with carry, the request that did not take effect: finish says the door
// dispatches it; otherwise unfinished says why not, and the issue's record says the next sweep takes it.
func (e *Engine) finishing(ctx context.Context, res Result, q Request, carry string, err error) (finish bool, unfinished error) {
	n := res.Issue
	ok, runs, ferr := e.Finishing(ctx, res, carry)
	switch {
	case ferr != nil:
		unfinished = fmt.Errorf("#%d: GitHub failed for a while, and the runs that finish its step could not be counted, so none is dispatched: the next sweep or `/ralph retry` goes on: %w", n, ferr)
	case !ok:
		unfinished = fmt.Errorf("#%d: GitHub failed %d runs in a row on this step; no run is dispatched again: the next sweep or `/ralph retry` goes on", n, runs+1)
	default:
		what := "the step"
		if carry != "" {
			what = fmt.Sprintf("@%s's %s and the step", q.Actor, q.Action)
		}
		e.Log.Warnf("#%d: GitHub failed for a while (#%d: %v); dispatching a run to finish %s (%d of %d)", n, n, err, what, runs, MaxFinishing)
		return true, nil
	}
	waits, lerr := e.Lost(ctx, n, res.Step, true)
	if lerr != nil {
		return false, errors.Join(unfinished, fmt.Errorf("#%d: its run was not started, and recording that it waits for the next sweep failed: %w", n, lerr))
	}
	if waits {
		e.Log.Warnf("#%d: its run was not started; its record says so, and the next sweep takes it first", n)
	}
	return false, unfinished
}
