package steps

import (
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// workflowSteps are the workflow's steps, in the order the planner tries them: each row is declared in its
// own file (research.go, plan.go, …), and named here once. engine.New builds its table from them; nothing keeps them in
// a package variable, so a test may build a table of its own.
func workflowSteps() []Step {
	return []Step{
		triageStep(),
		researchStep(),
		planStep(),
		reviewStep(),
		// A parent split into sub-issues is not implemented itself: it follows its sub-issues.
		childrenStep(workflow.InProgress, workflow.InReview, workflow.Done),
		childrenStep(workflow.InReview, workflow.Done),
		// After the pull request: a fix round's phase (before implement, which takes any phase left).
		fixStep(),
		implementStep(),
		selfReviewStep(),
		securityReviewStep(),
		pullRequestStep(),
		mergeStep(),
	}
}

// Commands are the moves that are no step's: enrolling (first: an issue meets it first), then a person's
// approval, rejection and request for a fix. Escalate and Retry are the workflow's rules (workflow.NewTable).
func Commands() []workflow.Declaration {
	return []workflow.Declaration{
		{Event: workflow.Enroll, To: []workflow.State{workflow.Backlog, workflow.ResearchNeeded, workflow.ReadyForPlan}},
		{Event: workflow.Approve, From: workflow.PlanInReview, To: []workflow.State{workflow.InProgress}},
		{Event: workflow.Reject, From: workflow.PlanInReview, To: []workflow.State{workflow.ReadyForPlan, workflow.HumanNeeded}},
		{Event: workflow.Fix, From: workflow.InReview, To: []workflow.State{workflow.InProgress}},
	}
}

// Workflow is the workflow's table: its steps and the commands' moves, built afresh from the declarations
// (nothing keeps it in a package variable, so a test may build a table of its own).
func Workflow() *Table { return NewTable(workflowSteps(), Commands()) }

// Ready says whether an enrolled issue with these labels has a step ralph can run now, as far as its labels
// tell (a sweep reads no record): not at a gate, not terminal, not in a lock state.
func Ready(labels []string, cfg config.Config) bool {
	states := workflow.StatesFromLabels(labels)
	switch len(states) {
	case 0:
		return true // enrolled by the label, not started yet
	case 1:
	default:
		return true // the run repairs the labels
	}
	p := Workflow().Next(0, Record{State: states[0]}, true, Facts{Blockers: []int{}}, cfg)
	return p.Now() && !p.Running
}
