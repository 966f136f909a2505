package engine

import (
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// runner is the pipeline's side of one step: the step's own runner (steps.Runner: the agent's session,
// the copies, what the agent used), which sees the issue as a snapshot taken when the step began, and
// the issue as the run keeps it, whose record the write-ahead and the outcome are written from.
type runner struct {
	cfg config.Config
	*steps.Runner
	ic *issue
	w  *writer
}

// runner makes the runner of one step (step, "" for a person's command) on ic, as ic stands now.
func (e *Engine) runner(ic *issue, step workflow.Event) *runner {
	r := &runner{ic: ic, w: ic.w, cfg: e.Config}
	r.Runner = steps.NewRunner(steps.Options{Issue: ic.snapshot(), Step: step, Config: e.Config, GitHub: e.GitHub,
		Log: e.Log, Workspaces: e.Workspaces, Prompts: e.Prompts, Author: e.Author, Writer: ic.w, People: ic.people,
		Now: e.now, Table: e.table(), Ahead: r.writeAhead,
		Session: func(w *steps.Work) Session { return e.session(ic.n, ic.rec, w) }})
	return r
}

// snapshot is the issue as a step sees it: a copy that nothing the run writes later changes.
func (ic *issue) snapshot() steps.Issue {
	gh := ic.gh
	gh.Labels = slices.Clone(gh.Labels)
	return steps.Issue{N: ic.n, GH: gh, Rec: ic.rec.Clone(), State: ic.state}
}

// close ends the step's work once its outcome is written: res says which of ralph's commits GitHub did not
// verify and what the agent used, and the copies are removed.
func (r *runner) close(res *Result) {
	res.Unverified = append(res.Unverified, r.Close()...)
	res.Usage = r.Usage
}
