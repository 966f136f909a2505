package session

import (
	"errors"
	"fmt"
)

// StepError is a step that failed; the issue was left in its start state (or sent to Human Needed).
type StepError struct {
	Step   string
	Reason string
	Err    error
}

func (e *StepError) Error() string {
	if e.Err != nil && !restated(e.Err) {
		return fmt.Sprintf("%s failed: %s: %v", e.Step, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s failed: %s", e.Step, e.Reason)
}

func (e *StepError) Unwrap() error { return e.Err }

// AgentFailure carries the tail of the agent's (or verify command's) output into the failure comment.
type AgentFailure struct {
	Err  error
	Tail string
	// Restated: the step's reason already says what Err says (an exit code, a timeout), in the reader's
	// terms; Err is not said again after it.
	Restated bool
}

func (a *AgentFailure) Error() string { return a.Err.Error() }

func (a *AgentFailure) Unwrap() error { return a.Err }

// restated reports whether err is an agent failure its step's reason already says.
func restated(err error) bool {
	var ae *AgentFailure
	return errors.As(err, &ae) && ae.Restated
}
