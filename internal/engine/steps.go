package engine

import "github.com/ralph-dev/gh-ralph/internal/workflow"

// The workflow's steps, in the order the planner tries them: each row is defined in its own file
// (step_*.go), and named here once.

func init() {
	// The rows name their run functions, which reach the table (restartState): so the table is put
	// together here rather than in its declaration, which Go would refuse as a cycle.
	steps = []Step{
		triageStep(),
		researchStep(),
		planStep(),
		reviewStep(),
		// A parent split into sub-issues is not implemented itself: it follows its sub-issues.
		childrenStep(workflow.InProgress),
		childrenStep(workflow.InReview),
		// After the pull request: a fix round's phase (before implement, which takes any phase left).
		fixStep(),
		implementStep(),
		selfReviewStep(),
		pullRequestStep(),
		mergeStep(),
	}
}
