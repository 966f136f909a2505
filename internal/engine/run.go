package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// step takes the one step the planner picks for the issue, or says why none runs.
func (e *Engine) step(ctx context.Context, ic *issue) (Result, error) {
	from := ic.state
	res := Result{Issue: ic.n, From: from, State: from}
	p, err := e.planFor(ctx, ic)
	if err != nil {
		return res, err
	}
	if !p.Runs() {
		res.Paused = p.Paused()
		res.Message = p.Message()
		return res, nil
	}
	st := p.Step
	res.Step = st.Name
	if e.AgentErr != nil && st.Agent(e.Config) {
		return res, fmt.Errorf("cannot run %s on #%d: %w", st.Name, ic.n, e.AgentErr)
	}
	if e.DryRun {
		res.Message = p.Message()
		return res, nil
	}
	e.fillRecord(ic)
	if ic.rec.Base == "" {
		base, err := e.baseBranch(ctx)
		if err != nil {
			return res, err
		}
		ic.rec.Base = base
	}
	// What the step changes of the record counts only if the step succeeds: a failed step is retried from
	// the record as it was (its rounds and iterations), so that the retry finds what the failed attempt
	// committed instead of doing it again.
	saved := ic.rec.clone()
	ic.saved = &saved
	var out Outcome
	err = e.begin(ctx, ic, st)
	if err == nil {
		out, err = st.Run(e, ctx, ic)
	}
	if serr := stepError(err); serr != nil {
		return e.fail(ctx, ic, st.Name, from, serr)
	}
	if err != nil {
		return res, err
	}
	return e.apply(ctx, ic, st, from, out)
}

// planFor plans the issue's next step, reading what blocks it when that matters (one request, for a
// sub-issue before its first step).
func (e *Engine) planFor(ctx context.Context, ic *issue) (Plan, error) {
	f := Facts{Closed: ic.gh.State == "closed"}
	p := Next(ic.n, ic.rec, true, f, e.Config)
	if !p.AskBlockers {
		return p, nil
	}
	open, err := openBlockers(ctx, e.GitHub, ic.n)
	if err != nil {
		return p, err
	}
	f.Blockers = open
	return Next(ic.n, ic.rec, true, f, e.Config), nil
}

// begin moves the issue into the step's lock state.
func (e *Engine) begin(ctx context.Context, ic *issue, st *Step) error {
	if st.Running == "" || ic.state == st.Running {
		return nil
	}
	if err := workflow.Check(ic.state, workflow.Start, st.Running); err != nil {
		return err
	}
	return e.setState(ctx, ic, st.Running)
}

func (e *Engine) baseBranch(ctx context.Context) (string, error) {
	if e.Config.BaseBranch != "" {
		return e.Config.BaseBranch, nil
	}
	// The remote's HEAD is its default branch: git says so without an API request.
	def, _, err := e.Workspaces.Repo().RemoteHeads(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the default branch: %w", err)
	}
	return def, nil
}
