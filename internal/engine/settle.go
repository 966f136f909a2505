package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/session"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Settling is the one place where a run's result becomes ralph's record. It is pure: the record as the run
// read it and what came of the run go in; the new record and the writes that carry it to GitHub come out
// (the other labels, the notices, then the status comment with the record, then the state label: see
// Engine.write). Nothing changes the record before it, so a step that fails leaves nothing to undo.

// settled is what a run writes, in order.
type settled struct {
	// Record is the new record; its State is To.
	Record Record
	To     workflow.State
	// Labels are the labels other than the state's to add (On) or remove, in order.
	Labels []labelChange
	// Notices are comments posted once each, under their keys.
	Notices []Notice
	// Message says what the run did (the record's last run says it too).
	Message string
}

type labelChange struct {
	Label string
	On    bool
}

// settling is what came of a step, or of a person's command.
type settling struct {
	Step  workflow.Event
	From  workflow.State // where the run found the issue
	State workflow.State // where the issue is now: the step's lock state, or From
	Out   Outcome        // Out.Record is the record as the step left it; nil: unchanged
	// Row is the step's declaration (nil for a person's command): the step may move the issue only to a
	// state it declares.
	Row *Step
	// By is the person whose command this is ("" for a step): a command is no step of the checklist.
	By       string
	At       time.Time
	URL      string
	Usage    *agent.Usage // what the agent reported of the run's step
	Takeover string       // the stale lock holder the run took over from
	// Refused are the hosts ralph's network proxy refused the step's agent and verify commands.
	Refused []string
}

// settle is what a step (or a person's command) that completed with s.Out makes of rec. Out.Wait is not
// settled: nothing is recorded of a step that found nothing to do.
func settle(t *table, rec Record, s settling) (settled, error) {
	if s.Out.Record != nil {
		rec = s.Out.Record.Clone()
	} else {
		rec = rec.Clone()
	}
	out := s.Out
	var w settled
	to := out.To
	if to == "" {
		to = s.State // staying is no move: nothing to check
	} else if out.Person == nil {
		if s.Row != nil && !s.Row.May(to) {
			return w, &workflow.TransitionError{From: s.State, Event: s.Step, To: to}
		}
		if err := t.Flow.Check(s.State, s.Step, to); err != nil {
			return w, err
		}
	}
	for _, l := range slices.Sorted(maps.Keys(out.Labels)) {
		w.Labels = append(w.Labels, labelChange{Label: l, On: out.Labels[l]})
	}
	if p := out.Person; p != nil {
		body := fmt.Sprintf("### ralph needs a person\n\n%s %s", Inert(p.Reason), p.Advice)
		n, err := escalate(t, &rec, s.State, p.Before, p.Reason, "human", body)
		if err != nil {
			return w, err
		}
		w.Notices = append(w.Notices, n...)
		to = workflow.HumanNeeded
	}
	if n := out.Notice; n != nil {
		w.Notices = append(w.Notices, *n)
	}
	var msg string
	if s.By != "" {
		msg = fmt.Sprintf("@%s: %s (%s → %s)", s.By, s.Step, s.From.Title(), to.Title())
	} else {
		msg = t.Describe(s.Step, s.From, to, rec)
		if to != workflow.HumanNeeded {
			rec.FailedStep, rec.Failures, rec.RulesRefused = "", 0, false
			rec.Steps = append(rec.Steps, Done{Step: s.Step, Note: msg})
		}
		if s.Takeover != "" {
			msg += fmt.Sprintf(" (after taking over a stale lock: %s)", s.Takeover)
		}
	}
	w.close(rec, to, Entry{Step: s.Step, From: s.From, To: to, At: s.At, URL: s.URL, Outcome: "done", Message: msg, Usage: s.Usage, Refused: s.Refused})
	return w, nil
}

// close ends a settlement: the record takes the new state and notes the run.
func (w *settled) close(rec Record, to workflow.State, run Entry) {
	rec.State = to
	rec.Note(run)
	w.Record, w.To, w.Message = rec, to, run.Message
}

// escalate makes Human Needed where rec goes, remembering where the issue was (before) and why, with body
// posted once as the notice "<key> <run>" (none when body is ""). It is the one way ralph asks for a person:
// a step's escalation, too many failures, a budget reached, labels no record explains.
func escalate(t *table, rec *Record, state, before workflow.State, reason, key, body string) ([]Notice, error) {
	// An issue being enrolled ("": labels no record explains) goes to a person without a transition of its own.
	if err := t.Flow.Check(state, workflow.Escalate, workflow.HumanNeeded); err != nil && state != "" {
		return nil, err
	}
	rec.Before, rec.Reason = before, reason
	if body == "" {
		return nil, nil
	}
	return []Notice{{Key: fmt.Sprintf("%s %d", key, rec.Runs), Body: body}}, nil
}

// failing is a step that failed.
type failing struct {
	Issue int
	Step  workflow.Event
	From  workflow.State // where the run found the issue
	State workflow.State // where it is now (the step's lock state)
	Err   *StepError
	// Interrupted is why the run's context ended, when it did: recorded, not counted.
	Interrupted error
	MaxFailures int
	At          time.Time
	URL         string
	Usage       *agent.Usage
	Refused     []string // hosts ralph's network proxy refused the step's agent and verify commands
	// Redact takes the values of secrets out of what ralph posts.
	Redact func(string) string
}

// failed is what a failure makes of the record: settled writes, and what the run reports (Message, for a
// budget reached; otherwise the record's last run).
type failed struct {
	settled
	// Paused: the issue now waits for a person; Continue: ralph tries again on the next run.
	Paused, Continue bool
	// Budget names the budget that stopped the step.
	Budget string
}

// settleFailure is what a failed step makes of rec (the record as the run read it: the step's changes are
// gone with it). The issue goes back to where the step started; the failure is counted, and the issue goes
// to a person when the same step has now failed max_failures times in a row. A step stopped at a budget
// goes to a person at once, and an interrupted run is recorded but not counted.
func settleFailure(t *table, rec Record, f failing) (failed, error) {
	rec = rec.Clone()
	var w failed
	start := t.RestartState(f.From)
	if f.State != start {
		if err := t.Flow.Check(f.State, workflow.Abort, start); err != nil {
			return w, err
		}
	}
	serr, ev := f.Err, f.Step
	run := Entry{Step: ev, From: f.From, To: start, At: f.At, URL: f.URL, Usage: f.Usage, Refused: f.Refused}
	var be *session.BudgetError
	switch {
	case errors.As(serr, &be):
		reason := session.BudgetReason(f.Issue, be)
		n, err := escalate(t, &rec, f.State, start, reason, "budget "+string(ev), "### ralph: the model budget is reached, a person is needed\n\n"+reason)
		if err != nil {
			return w, err
		}
		w.Notices = n
		run.To, run.Outcome, run.Message = workflow.HumanNeeded, "budget reached", be.Error()
		w.Paused, w.Budget = true, be.Limit.Name
		w.close(rec, run.To, run)
		w.Message = fmt.Sprintf("#%d: %s; a person is needed", f.Issue, be)
		return w, nil
	case f.Interrupted != nil:
		run.Outcome, run.Message = "interrupted", "the run was interrupted: "+f.Interrupted.Error()
		w.close(rec, start, run)
		return w, nil
	}
	if rec.FailedStep == ev {
		rec.Failures++
	} else {
		rec.FailedStep, rec.Failures = ev, 1
	}
	run.Outcome, run.Message = "failed", f.Redact(serr.Reason)
	key := fmt.Sprintf("failed %s", ev)
	// A push a repository rule refused (GH013) is counted once and not tried again: the same push meets the
	// same rule until a person changes it.
	rej := (*git.PushRejectedError)(nil)
	ruled := errors.As(serr, &rej) && len(rej.Rules) > 0
	if ruled {
		rec.RulesRefused = true // the next attempt reads the rules before its agent runs
	}
	if rec.Failures >= f.MaxFailures || ruled {
		reason := fmt.Sprintf("The %s step failed %d times in a row; the last time: %s.", ev, rec.Failures, Inert(serr.Reason))
		if ruled {
			reason = fmt.Sprintf("The %s step failed: %s. ralph does not try it again until a person acts.", ev, Inert(serr.Reason))
		}
		body := fmt.Sprintf("### ralph: %s failed, a person is needed\n\n%s\n\n%s\nWhat was produced before the failure is kept on the branch `%s`. Fix the cause (the issue, the config, the agent), then say `/ralph retry` (or run `gh ralph retry %d`) to go on from %s.",
			ev, reason, detail(serr), rec.Branch, f.Issue, start.Title())
		n, err := escalate(t, &rec, f.State, start, reason, key, f.Redact(body))
		if err != nil {
			return w, err
		}
		w.Notices, w.Paused, run.To = n, true, workflow.HumanNeeded
	} else {
		body := fmt.Sprintf("### ralph: %s failed (%d of %d)\n\n%s.\n\n%s\nThe issue stays in %s and ralph tries again on the next run; after %d failures in a row it stops and asks for a person. To retry now, re-run the workflow or run `gh ralph advance %d`.",
			ev, rec.Failures, f.MaxFailures, capitalize(Inert(serr.Reason)), detail(serr), start.Title(), f.MaxFailures, f.Issue)
		w.Notices, w.Continue = []Notice{{Key: fmt.Sprintf("%s %d", key, rec.Runs), Body: f.Redact(body)}}, true
	}
	w.close(rec, run.To, run)
	return w, nil
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
		fmt.Fprintf(&b, "Error: `%s`\n\n", inert.CodeText(serr.Err.Error()))
	}
	var ae *session.AgentFailure
	if errors.As(serr.Err, &ae) && ae.Tail != "" {
		fmt.Fprintf(&b, "<details><summary>Last output</summary>\n\n%s\n</details>\n\n", inert.Fence("text", InertText(ae.Tail)))
	}
	return b.String()
}

// restated reports whether err is an agent failure its step's reason already says.
func restated(err error) bool {
	var ae *session.AgentFailure
	return errors.As(err, &ae) && ae.Restated
}
