package steps

import (
	"context"

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
