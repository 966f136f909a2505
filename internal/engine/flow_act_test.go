package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowAct: a person's command, then the step it makes ready, is one call (what both doors make).
func TestFlowAct(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		advance  bool
		wantStep workflow.Event // the step taken after the command; "" none
		wantAt   workflow.State
	}{
		{"approve alone", false, "", workflow.InProgress},
		{"approve, then the step it makes ready", true, workflow.Implement, workflow.InProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *config.Config) { c.Review, c.Research = config.ReviewInteractive, false })
			n := h.enrolled("Parse widgets")
			h.to(n, workflow.PlanInReview, 4)
			before := len(h.agent.commands())
			res, step, err := h.eng.Act(ctx, engine.Command{Action: engine.ActApprove, Issue: n, Login: "alice", Advance: tt.advance})
			if err != nil {
				t.Fatal(err)
			}
			if res.Step != workflow.Event(engine.ActApprove) || res.State != workflow.InProgress || !res.Continue {
				t.Errorf("the command's Result = %+v", res)
			}
			var got workflow.Event
			if step != nil {
				got = step.Step
			}
			if got != tt.wantStep {
				t.Errorf("step taken = %q, want %q", got, tt.wantStep)
			}
			if ran := len(h.agent.commands()) - before; (ran > 0) != (tt.wantStep != "") {
				t.Errorf("the agent ran %d times after the command", ran)
			}
			h.wantState(n, tt.wantAt)
		})
	}
	t.Run("not a person's command", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		var ie *engine.InputError
		if _, _, err := h.eng.Act(ctx, engine.Command{Action: engine.ActEnroll, Issue: 1, Login: "alice"}); !errors.As(err, &ie) {
			t.Errorf("Act(enroll) = %v, want an InputError", err)
		}
	})
}
