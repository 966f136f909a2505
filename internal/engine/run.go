package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// step takes the one step the planner picks for the issue, or says why none runs. It returns the issue as
// the run last wrote it, also when the step failed.
func (e *Engine) step(ctx context.Context, ic issue) (res Result, _ issue, err error) {
	from := ic.state
	res = Result{Issue: ic.n, From: from, State: from}
	p, err := e.decide(ctx, ic)
	if err != nil {
		return res, ic, err
	}
	if !p.Takes() {
		res.Paused = p.Paused()
		res.Message = p.Message()
		return res, ic, nil
	}
	st := p.Step
	res.Step = st.Name
	if e.AgentErr != nil && st.Agent(e.Config) {
		return res, ic, fmt.Errorf("cannot run %s on #%d: %w", st.Name, ic.n, e.AgentErr)
	}
	if e.DryRun {
		res.Message = p.Message()
		return res, ic, nil
	}
	ic = e.reader().filled(ic)
	if ic.rec.Base == "" {
		base, err := e.baseBranch(ctx)
		if err != nil {
			return res, ic, err
		}
		ic = ic.edited(func(rec *Record) { rec.Base = base })
	}
	if e.startsExhausted(ic, st) {
		// The agent started max_failures times and no outcome was recorded: it does not start again.
		ic = ic.edited(func(rec *Record) { rec.Failures = e.Config.MaxFailures - 1 })
		return e.fail(ctx, ic, e.runner(ic, st.Name), from, &StepError{Step: string(st.Name), Reason: fmt.Sprintf("the agent started %d times in a row for this step and ralph could not record how it ended", e.Config.MaxFailures)})
	}
	// The rules of the issue's branch are read before anything changes: a rule that would refuse the step's
	// push stops the run here, with no agent run and nothing written.
	if err := e.checkRules(ctx, ic, st); err != nil {
		return res, ic, err
	}
	var out Outcome
	ic, err = e.begin(ctx, ic, st)
	// The step sees the issue as it stands now, in the step's lock state: a snapshot, which nothing written
	// later changes. It works on a draft of the record: what it changes counts only once settled. A failed
	// step is settled from the record as the run read it (its rounds and iterations), so that the retry
	// finds what the failed attempt committed instead of doing it again.
	r := e.runner(ic, st.Name)
	defer r.close(&res)
	if err == nil {
		draft := ic.rec.Clone()
		out, err = st.Do(r.Runner, ctx, &draft)
		if ws := r.WS; ws != nil && ws.Pushed() != "" {
			draft.Head = ws.Pushed() // the commit ralph last pushed: a fix builds on it, checks on it are ralph's
		}
		out.Record = &draft
	}
	if serr := steps.AsStepError(err); serr != nil {
		return e.fail(ctx, ic, r, from, serr)
	}
	if err != nil {
		return res, ic, err
	}
	if w := out.Wait; w != nil {
		// Nothing is recorded of a step that found nothing to do: not its attempt either.
		if r.Ahead != nil {
			if err := ic.w.saveStatus(ctx, ic); err != nil {
				return res, ic, err
			}
		}
		res.Message, res.Paused, res.Dispatch = w.Message, w.Paused, out.Dispatch
		if !w.Paused {
			res.Step = ""
		}
		return res, ic, nil
	}
	s, err := settle(e.table(), ic.rec, settling{Step: st.Name, Row: st, From: from, State: ic.state, Out: out,
		At: e.now(), URL: e.Origin.URL, Usage: r.Usage, Takeover: ic.takeover, Refused: r.Refused})
	if err == nil {
		if ic, err = ic.w.write(ctx, ic, s); err != nil {
			ic, err = e.unrecorded(ctx, ic, r, from, err)
		}
	}
	if err != nil {
		return Result{Issue: ic.n, Step: st.Name, From: from, State: ic.state}, ic, err
	}
	res = Result{Issue: ic.n, Step: st.Name, From: from, State: s.To, PRURL: s.Record.PRURL, Message: s.Message, Dispatch: out.Dispatch, Refused: r.Refused}
	if s.Record.Parent != 0 && s.To != from {
		res.Dispatch = append(res.Dispatch, s.Record.Parent) // the parent follows its sub-issues
	}
	res.Paused, res.Continue = e.next(ic)
	return res, ic, nil
}

// decide asks the planner for the issue's next step, reading what blocks it when that matters (one request, for a
// sub-issue before its first step).
func (e *Engine) decide(ctx context.Context, ic issue) (Decision, error) {
	f := Facts{Closed: ic.gh.State == "closed"}
	p := e.table().Next(ic.n, ic.rec, true, f, e.Config)
	if !p.AskBlockers {
		return p, nil
	}
	open, err := steps.OpenBlockers(ctx, e.GitHub, ic.n)
	if err != nil {
		return p, err
	}
	f.Blockers = open
	return e.table().Next(ic.n, ic.rec, true, f, e.Config), nil
}

// begin moves the issue into the step's lock state, and returns it there.
func (e *Engine) begin(ctx context.Context, ic issue, st *Step) (issue, error) {
	if st.Running == "" || ic.state == st.Running {
		return ic, nil
	}
	if err := e.table().Flow.Check(ic.state, workflow.Start, st.Running); err != nil {
		return ic, err
	}
	return ic.w.setState(ctx, ic, st.Running)
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

// next says whether the issue now waits for people, or has a step ralph can run right away.
func (e *Engine) next(ic issue) (paused, cont bool) {
	p := e.table().Next(ic.n, ic.rec, true, Facts{Blockers: []int{}}, e.Config)
	return p.Paused(), p.Now()
}
