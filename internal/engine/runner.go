package engine

import (
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// runner is what a step runs with: the agent's session (the agent in its boundary, the model gateway and
// its budgets) on its copy of the issue's branch; the documents and commits ralph makes of the agent's work; and the writer,
// for the comments a step posts. A step's run function is a method of it (step_*.go).
type runner struct {
	ic  *issue // the issue the step is taken on, as the run read it
	cfg config.Config
	gh  GitHub
	log Logger
	// session runs the agent and the verify commands, and knows the secrets.
	session    Session
	workspaces *workspace.Store
	prompts    *prompts.Set
	author     git.Signature
	w          *writer
	now        func() time.Time
}

func (e *Engine) runner(ic *issue) *runner {
	return &runner{ic: ic, cfg: e.Config, gh: e.GitHub, log: e.Log, session: e.session(ic), workspaces: e.Workspaces,
		prompts: e.Prompts, author: e.Author, w: ic.w, now: e.now}
}
