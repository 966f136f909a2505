package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// TestHandleRecorded: Handle's Result says whether a failure was recorded on the issue (a step that
// failed: its record says what comes next), and, for a door that dispatches runs to finish a step, asks
// for one only for GitHub failing for a while, not for a recorded failure.
func TestHandleRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.agent.on("research", exits(3, "boom"))
	res, err := h.eng.Handle(ctx, engine.Request{Action: engine.ActAdvance, Issue: n, Finishable: true})
	if stepError(err) == nil || !res.Recorded || res.Finish || res.Unfinished != nil {
		t.Errorf("a failed step: Result = %+v, %v; want Recorded, no Finish", res, err)
	}

	// A recorded failure whose cause GitHub would retry (the agent's own call answered 502), the last
	// one max_failures allows: the record says what comes next (a person), so no run is dispatched to
	// finish it.
	h = newHarness(t, func(c *config.Config) { c.MaxFailures = 1 })
	n = h.enrolled("Parse widgets")
	h.eng.NewSession = func(int) engine.Session {
		return &scriptedSession{script: func(*workspace.Workspace, session.Run) error {
			return &engine.StepError{Step: "research", Reason: "the agent's request failed", Err: &ghapi.Error{Status: 502}}
		}}
	}
	res, err = h.eng.Handle(ctx, engine.Request{Action: engine.ActAdvance, Issue: n, Finishable: true})
	if stepError(err) == nil || !engine.Transient(err) || !res.Recorded || res.Finish || res.Unfinished != nil {
		t.Errorf("a recorded failure with a transient cause: Result = %+v, %v; want Recorded, no Finish", res, err)
	}
	h.wantState(n, workflow.HumanNeeded)

	h = newHarness(t, nil)
	n = h.enrolled("Parse widgets")
	h.advance(n)
	h.gh.failCall("UpdateComment", 1, 502)
	res, err = h.eng.Handle(ctx, engine.Request{Action: engine.ActAdvance, Issue: n, Finishable: true})
	if err == nil || !strings.Contains(err.Error(), "HTTP 502") || res.Recorded || !res.Finish || res.Unfinished != nil {
		t.Errorf("GitHub's 502 mid-step: Result = %+v, %v; want Finish, not Recorded", res, err)
	}
	if !h.log.has("dispatching a run to finish the step (1 of 3)") {
		t.Errorf("the run did not say it dispatches a run to finish: %v", h.log.lines)
	}
	// The run dispatched to finish advances the issue (nothing was carried).
	res, err = h.eng.Handle(ctx, engine.Request{Action: engine.ActFinish, Issue: n, Finishable: true})
	if err != nil || res.Step == "" || res.Finish {
		t.Errorf("the finishing run: Result = %+v, %v", res, err)
	}
}

// TestHandleNotFinishable: a door that dispatches no run (gh ralph, the Action without chain) gets no
// Finish, and no count is kept.
func TestHandleNotFinishable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.advance(n)
	h.gh.failCall("UpdateComment", 1, 502)
	res, err := h.eng.Handle(context.Background(), engine.Request{Action: engine.ActAdvance, Issue: n})
	if err == nil || res.Recorded || res.Finish || res.Unfinished != nil {
		t.Errorf("Result = %+v, %v; want a transient failure and no Finish", res, err)
	}
}

// TestHandleUnknown: a request of no kind the engine handles is refused with what to use, and changes
// nothing.
func TestHandleUnknown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	_, err := h.eng.Handle(context.Background(), engine.Request{Action: "frobnicate", Issue: n})
	var input *engine.InputError
	if err == nil || !errors.As(err, &input) || !strings.Contains(err.Error(), "use advance") {
		t.Errorf("Handle(frobnicate) = %v, want an input error naming the commands", err)
	}
}

// TestHandleActed: a person's command through Handle takes the step it makes ready unless CommandOnly; the
// Result is then the step's, with the command's own in Acted.
func TestHandleActed(t *testing.T) {
	t.Parallel()
	for _, only := range []bool{false, true} {
		t.Run(fmt.Sprintf("CommandOnly=%v", only), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *config.Config) { c.Review, c.Research = config.ReviewInteractive, false })
			n := h.enrolled("Parse widgets")
			h.to(n, workflow.PlanInReview, 4)
			res, err := h.eng.Handle(context.Background(), engine.Request{Action: engine.ActApprove, Issue: n, Actor: "alice", CommandOnly: only})
			if err != nil {
				t.Fatal(err)
			}
			if only {
				if res.Acted != nil || res.Step != workflow.Approve || !res.Continue {
					t.Errorf("the command alone: Result = %+v", res)
				}
				return
			}
			if res.Acted == nil || res.Acted.Step != workflow.Approve || res.Step != workflow.Implement {
				t.Errorf("the command and its step: Result = %+v, Acted %+v", res, res.Acted)
			}
		})
	}
}
