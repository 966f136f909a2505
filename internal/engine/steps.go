package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// workflowSteps are the workflow's steps, in the order the planner tries them: each row is declared in its
// own file (step_*.go), and named here once. New builds the engine's table from them; nothing keeps them in
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

// commandMoves are the moves that are no step's: enrolling (first: an issue meets it first), then a person's
// approval, rejection and request for a fix. Escalate and Retry are the workflow's rules (workflow.NewTable).
func commandMoves() []workflow.Declaration {
	return []workflow.Declaration{
		{Event: workflow.Enroll, To: []workflow.State{workflow.Backlog, workflow.ResearchNeeded, workflow.ReadyForPlan}},
		{Event: workflow.Approve, From: workflow.PlanInReview, To: []workflow.State{workflow.InProgress}},
		{Event: workflow.Reject, From: workflow.PlanInReview, To: []workflow.State{workflow.ReadyForPlan, workflow.HumanNeeded}},
		{Event: workflow.Fix, From: workflow.InReview, To: []workflow.State{workflow.InProgress}},
	}
}

// New is an engine with e's dependencies and the workflow's table, built from the steps' declarations.
func New(e Engine) *Engine {
	e.steps = workflowTable()
	return &e
}

// workflowTable is the workflow's table: its steps and the commands' moves.
func workflowTable() *table { return newTable(workflowSteps(), commandMoves()) }

// The package's functions that read the workflow's table without an engine (gh ralph status, sweeps,
// the demo): each builds it from the declarations.

// Next plans what happens to issue n with record rec (rec.State "" when ralph holds none; enrolled then
// says whether ralph:build is on it) under config c.
func Next(n int, rec Record, enrolled bool, f Facts, c config.Config) Decision {
	return workflowTable().next(n, rec, enrolled, f, c)
}

// RenderStatus renders issue n's status comment for rec under cfg (see renderStatus).
func RenderStatus(n int, rec Record, cfg config.Config, links Links) string {
	return workflowTable().renderStatus(n, rec, cfg, links, Facts{})
}

// Documents are the kinds of document the steps write, in the workflow's order.
func Documents() []Document { return workflowTable().documents() }

// DocumentKinds are the record's artifact keys, in the workflow's order.
func DocumentKinds() []string {
	var out []string
	for _, d := range Documents() {
		out = append(out, d.Kind)
	}
	return out
}

// Transitions are the workflow's legal moves, derived from the steps' declarations.
func Transitions() []workflow.Transition { return workflowTable().flow.Transitions() }
