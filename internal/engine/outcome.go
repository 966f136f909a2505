package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Outcome is what a step came to. The step does its work (the agent, the commits and pushes, the
// document's comment) and says where that leaves the issue; apply is the one place that records it: the
// notices, the other labels, the status comment with the record, the state label, the board.
type Outcome struct {
	// To is the issue's new state; "" leaves it where the step started.
	To workflow.State
	// Wait: the step found nothing to do yet. Nothing is recorded; the run says why.
	Wait *Waiting
	// Person: a person is needed. The issue goes to Human Needed, and the notice says why and what to do.
	Person *Escalation
	// Notice is a comment the run posts once (a rerun finds it by its key and edits it).
	Notice *Notice
	// Labels are labels other than the state's to add (true) or remove (false).
	Labels map[string]bool
	// Dispatch lists other issues that can take a step now because of this one.
	Dispatch []int
}

// Waiting is a step that found nothing to do yet.
type Waiting struct {
	Message string
	// Paused: people are to act (an open pull request); otherwise the issue waits for other issues and
	// the run reports no step.
	Paused bool
}

// Escalation sends an issue to a person.
type Escalation struct {
	// Before is where a person's retry takes the issue back to.
	Before workflow.State
	// Reason is why, as the status comment shows it.
	Reason string
	// Advice is what a person can do, after the reason in the notice.
	Advice string
}

// Notice is a comment posted once, under Key.
type Notice struct{ Key, Body string }

// apply records a step that completed with out.
func (e *Engine) apply(ctx context.Context, ic *issue, st *Step, from workflow.State, out Outcome) (Result, error) {
	if w := out.Wait; w != nil {
		res := Result{Issue: ic.n, From: from, State: from, Message: w.Message, Paused: w.Paused, Dispatch: out.Dispatch}
		if w.Paused {
			res.Step = st.Name
		}
		return res, nil
	}
	if err := e.record(ctx, ic, st.Name, out); err != nil {
		return Result{Issue: ic.n, Step: st.Name, From: from, State: ic.state}, err
	}
	return e.finish(ctx, ic, st.Name, from, out.Dispatch)
}

// record writes what out says besides the record and the state (those are commit's): the other labels,
// the escalation and the notice; the new state becomes the run's outcome (ic.to), checked against the
// workflow's transitions for ev.
func (e *Engine) record(ctx context.Context, ic *issue, ev workflow.Event, out Outcome) error {
	to := out.To
	if to == "" {
		to = ic.state // staying is no move: nothing to check
	} else if out.Person == nil {
		if err := workflow.Check(ic.state, ev, to); err != nil {
			return err
		}
	}
	labels := make([]string, 0, len(out.Labels))
	for l := range out.Labels {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	for _, l := range labels {
		if err := e.toggleLabel(ctx, ic, l, out.Labels[l]); err != nil {
			return err
		}
	}
	if p := out.Person; p != nil {
		body := fmt.Sprintf("### ralph needs a person\n\n%s %s", Inert(p.Reason), p.Advice)
		if err := e.needsPerson(ctx, ic, p.Before, p.Reason, "human", body); err != nil {
			return err
		}
		to = workflow.HumanNeeded
	}
	if n := out.Notice; n != nil {
		if err := e.notice(ctx, ic, n.Key, n.Body); err != nil {
			return err
		}
	}
	ic.to = to
	return nil
}

// needsPerson makes Human Needed the run's outcome, remembering where the issue was and why, and posts body
// once as the notice "<key> <run>" (when body is not empty). It is the one way ralph asks for a person:
// a step's escalation, too many failures, a budget reached, labels no record explains.
func (e *Engine) needsPerson(ctx context.Context, ic *issue, before workflow.State, reason, key, body string) error {
	// An issue being enrolled ("": labels no record explains) goes to a person without a transition of its own.
	if err := workflow.Check(ic.state, workflow.Escalate, workflow.HumanNeeded); err != nil && ic.state != "" {
		return err
	}
	ic.rec.Before, ic.rec.Reason = before, reason
	ic.to = workflow.HumanNeeded
	if body == "" {
		return nil
	}
	return e.notice(ctx, ic, fmt.Sprintf("%s %d", key, ic.rec.Runs), body)
}

// finish records a step that completed.
func (e *Engine) finish(ctx context.Context, ic *issue, ev workflow.Event, from workflow.State, dispatch []int) (Result, error) {
	to := ic.to
	if to == "" {
		to = ic.state
	}
	msg := describe(ev, from, to, ic)
	if to != workflow.HumanNeeded {
		ic.rec.FailedStep, ic.rec.Failures = "", 0
		ic.rec.Steps = append(ic.rec.Steps, Done{Step: ev, Note: msg})
	}
	if ic.takeover != "" {
		msg += fmt.Sprintf(" (after taking over a stale lock: %s)", ic.takeover)
	}
	if err := e.commit(ctx, ic, Run{Step: ev, From: from, To: to, At: e.now(), URL: e.Run.URL, Outcome: "done", Message: msg}); err != nil {
		return Result{Issue: ic.n, Step: ev, From: from, State: ic.state}, err
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: to, PRURL: ic.rec.PRURL, Message: msg, Dispatch: dispatch}
	if ic.rec.Parent != 0 && to != from {
		res.Dispatch = append(res.Dispatch, ic.rec.Parent) // the parent follows its sub-issues
	}
	res.Paused, res.Continue = e.next(ic)
	return res, nil
}

// next says whether the issue now waits for people, or has a step ralph can run right away.
func (e *Engine) next(ic *issue) (paused, cont bool) {
	p := Next(ic.n, ic.rec, true, Facts{Blockers: []int{}}, e.Config)
	return p.Paused(), p.Now()
}

func describe(ev workflow.Event, from, to workflow.State, ic *issue) string {
	switch {
	case ev == workflow.Children && from == to:
		return "sub-issues: " + childSummary(ic.rec)
	case ev == workflow.Implement:
		return fmt.Sprintf("phase %d of %d done", ic.rec.phasesDone(), len(ic.rec.Phases))
	case from == to:
		return fmt.Sprintf("%s done; still %s", ev, to.Title())
	}
	return fmt.Sprintf("%s: %s → %s", ev, from.Title(), to.Title())
}

// stepError is err as a step's failure (nil when it is another error, or none).
func stepError(err error) *StepError {
	var serr *StepError
	if errors.As(err, &serr) {
		return serr
	}
	return nil
}
