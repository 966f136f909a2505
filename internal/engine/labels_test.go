package engine

import (
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestRalphsOwnLabel(t *testing.T) {
	t.Parallel()
	last := &Entry{Step: workflow.Plan, From: workflow.ReadyForPlan, To: workflow.PlanInReview}
	tests := []struct {
		name   string
		rec    Record
		labels []workflow.State
		want   bool
	}{
		{"the lock state of the next step", Record{State: workflow.ResearchNeeded}, []workflow.State{workflow.ResearchInProgress}, true},
		{"the step's outcome recorded, the label not moved", Record{State: workflow.PlanInReview, Last: last}, []workflow.State{workflow.PlanInProgress}, true},
		{"where the recorded step started", Record{State: workflow.PlanInReview, Last: last}, []workflow.State{workflow.ReadyForPlan}, true},
		{"moved by someone", Record{State: workflow.PlanInReview, Last: last}, []workflow.State{workflow.InProgress}, false},
		{"two labels", Record{State: workflow.PlanInReview}, []workflow.State{workflow.PlanInReview, workflow.Done}, false},
		{"none", Record{State: workflow.PlanInReview}, nil, false},
	}
	for _, tt := range tests {
		if got := ralphsOwn(workflowTable(), tt.rec, tt.labels); got != tt.want {
			t.Errorf("%s: ralphsOwn = %v, want %v", tt.name, got, tt.want)
		}
	}
}
