package engine

import (
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
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
	work
}

// runner makes the runner of one step (step, "" for a person's command) on ic.
func (e *Engine) runner(ic *issue, step workflow.Event) *runner {
	r := &runner{ic: ic, cfg: e.Config, gh: e.GitHub, log: e.Log, workspaces: e.Workspaces,
		prompts: e.Prompts, author: e.Author, w: ic.w, now: e.now, work: work{step: step}}
	r.session = e.session(ic, &r.work)
	return r
}

// close ends the step's work once its outcome is written: res says which of ralph's commits GitHub did not
// verify and what the agent used, and the agent's copy and the documents branch's are removed.
func (r *runner) close(res *Result) {
	for _, ws := range []*workspace.Workspace{r.ws, r.docs} {
		if ws == nil {
			continue
		}
		for _, u := range ws.Unverified {
			res.Unverified = append(res.Unverified, u.SHA+": "+u.Reason)
			r.log.Warnf("#%d: GitHub did not verify ralph's commit %s (%s)", r.ic.n, u.SHA, u.Reason)
		}
		if err := ws.Close(); err != nil && ws == r.ws {
			r.log.Warnf("#%d: removing the agent's copy: %v", r.ic.n, err)
		}
	}
	res.Usage = r.usage
}
