package steps

import (
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Outcome is what a step came to. The step does its work (the agent, the commits and pushes, the
// document's comment) and says where that leaves the issue and what it makes of the record; settle is the
// one place that records it (the engine's settle), and write carries that to GitHub: the notices, the other labels,
// the status comment with the record, the state label, the board.
type Outcome struct {
	// Record is the record as the step leaves it (the step's draft); nil: the step changed nothing of it.
	Record *Record
	// To is the new state; "" leaves it where the step started.
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

// AsStepError is err as a step's failure (nil when it is another error, or none).
func AsStepError(err error) *StepError {
	var serr *StepError
	if errors.As(err, &serr) {
		return serr
	}
	return nil
}

// plural is "1 phase", "2 phases": n and the word for it.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// InputError is bad input from a person: a missing issue, a pull request, a command that does not apply.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// InputErrorf is an InputError of the message format makes of args.
func InputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// StepError is a step that failed; the issue was left in its start state (or sent to Human Needed).
type StepError = session.StepError
