package engine

import (
	"net/http"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// runner is what a step runs with: the agent, in its boundary, on its copy of the issue's branch; the
// documents and commits ralph makes of the agent's work; the model gateway and its budgets; and the writer,
// for the comments a step posts. A step's run function is a method of it (step_*.go).
type runner struct {
	ic         *issue // the issue the step is taken on, as the run read it
	cfg        config.Config
	gh         GitHub
	log        Logger
	agent      agent.Runner
	sandbox    sandbox.Config
	workspaces *workspace.Store
	prompts    *prompts.Set
	author     git.Signature
	// baseEnv is the environment the agent starts from, secretNames the credentials taken out of it.
	baseEnv        []string
	secretNames    []string
	modelTransport http.RoundTripper
	ledger         Ledger
	w              writer
	people         people
	now            func() time.Time
}

func (e *Engine) runner(ic *issue) *runner {
	return &runner{ic: ic, cfg: e.Config, gh: e.GitHub, log: e.Log, agent: e.Agent, sandbox: e.Sandbox, workspaces: e.Workspaces,
		prompts: e.Prompts, author: e.Author, baseEnv: e.AgentEnv, secretNames: e.Secrets, modelTransport: e.ModelTransport,
		ledger: e.Ledger, w: e.writer(ic), people: e.people(), now: e.now}
}
