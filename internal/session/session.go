// Package session is the agent's session for one step of ralph's workflow: the model gateway and its
// budgets, the network proxy, the boundary and its firewall rule, the step's caches, running the agent and
// the verify commands, and the secrets ralph must never let reach GitHub. The engine's steps see it
// through a small interface (engine.Session); this is the real one.
package session

import (
	"context"
	"io"
	"net/http"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Logger is where a session reports progress; engine.Logger is one.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	// Untrusted starts a section for output that is not ralph's (the agent's, a verify command's), and
	// returns where that output goes and the function that ends the section.
	Untrusted(title string) (io.Writer, func())
}

// Meterer is a Logger that shows, while an agent's section (Untrusted) is open, what the agent has used so
// far: meter returns the tokens and cost ralph's model gateway has metered until now, and may be called
// from another goroutine at any time until the section ends.
type Meterer interface {
	Meter(meter func() (tokens int, costUSD float64))
}

// Ledger keeps what the repository spends on the model per UTC day, across runs (budget.day);
// *ledger.Ledger implements it.
type Ledger interface {
	Today(ctx context.Context) (ledger.Day, error)
	Add(ctx context.Context, cost float64, tokens int, note string) (ledger.Day, error)
}

var _ Ledger = (*ledger.Ledger)(nil)

// Notes is where a session leaves, as its runs end, what the issue's record keeps of them: the agent's
// usage and the hosts ralph's network proxy refused.
type Notes interface {
	// Usage is what the agent used in one run of command (nil: nothing reported).
	Usage(command string, u *agent.Usage)
	// Refused notes a host the proxy refused, and says whether it is new to the step (it is said once).
	Refused(host string) bool
	// RefusedMore counts hosts refused beyond what the proxy kept.
	RefusedMore(n int)
}

// Options are what a session is built with: the engine's, and the issue's step.
type Options struct {
	Config  config.Config
	Log     Logger
	Agent   agent.Runner
	Sandbox sandbox.Config
	// BaseEnv is the environment the agent starts from, SecretNames the credentials taken out of it.
	BaseEnv        []string
	SecretNames    []string
	ModelTransport http.RoundTripper
	Ledger         Ledger
	// Issue is the issue's number; Spent says what the issue's agent spent before this step (budget.issue),
	// read when the agent starts (nil: nothing).
	Issue int
	Spent func() float64
	Notes Notes
}

// Session is the agent's session for one step of one issue.
type Session struct {
	cfg            config.Config
	log            Logger
	agent          agent.Runner
	sandbox        sandbox.Config
	baseEnv        []string
	secretNames    []string
	modelTransport http.RoundTripper
	ledger         Ledger
	issue          int
	spent          func() float64
	notes          Notes
}

// New is the session o describes.
func New(o Options) *Session {
	return &Session{cfg: o.Config, log: o.Log, agent: o.Agent, sandbox: o.Sandbox, baseEnv: o.BaseEnv, secretNames: o.SecretNames,
		modelTransport: o.ModelTransport, ledger: o.Ledger, issue: o.Issue, spent: o.Spent, notes: o.Notes}
}
