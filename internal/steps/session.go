package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Session is the agent's session for one step, what a step runs the agent and the verify commands with:
// *session.Session is the real one (the model gateway and its budgets, the network proxy, the boundary,
// the secrets), a test's scripted session another.
type Session interface {
	// Prepare readies the step's copy for the agent, before it first runs.
	Prepare(ws *workspace.Workspace)
	// Run runs the agent once on ws. A failure is a *StepError, with a *session.BudgetError when a budget
	// stopped the agent.
	Run(ctx context.Context, ws *workspace.Workspace, run session.Run) error
	// Verify runs the verify commands on ws (phase of phases); all must pass.
	Verify(ctx context.Context, ws *workspace.Workspace, phase, phases int) error
	// Scan refuses changes whose files hold a secret's value.
	Scan(ctx context.Context, ws *workspace.Workspace, changes []git.Change) error
	// Leaks names the secrets whose values text holds; Redact replaces them with ***.
	Leaks(text string) []string
	Redact(text string) string
}

var _ Session = (*session.Session)(nil)

// StepError is a step that failed; the issue was left in its start state (or sent to Human Needed).
type StepError = session.StepError

// refuseLeak is the failure of a step whose product (what: "the document", "the triage") holds a
// secret's value, or nil: nothing of it may be committed, pushed or posted.
func (r *Runner) refuseLeak(step, what, text string) error {
	names := r.session.Leaks(text)
	if len(names) == 0 {
		return nil
	}
	return &StepError{Step: step, Reason: fmt.Sprintf("%s holds the value of %s, a secret the agent holds; ralph committed and posted nothing of it", what, strings.Join(names, ", "))}
}
