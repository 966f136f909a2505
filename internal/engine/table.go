package engine

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Step is one step of ralph's workflow: one row of the table below. A run takes one step: the planner
// (planner.go) picks the row, the engine moves the issue into the row's Running state, calls Run, and
// applies the Outcome it returns (outcome.go). Adding a step is adding a row and its function.
type Step struct {
	Name workflow.Event
	// From is the state the step starts from.
	From workflow.State
	// Running is the state while the step runs (its lock state, shown by the label); "" when the issue
	// stays in From.
	Running workflow.State
	// When, when set, must hold of the record for the step to be the one From calls for (several steps
	// start from In Progress); the first row whose From and When match is the step.
	When func(rec Record, c config.Config) bool
	// Agent says whether the step runs the agent under config c.
	Agent func(c config.Config) bool
	// Person says whether, under config c, the step is a person's to take: the issue waits for them.
	Person func(c config.Config) bool
	// Document is the kind of document the step writes and commits ("" none): its comment's title and
	// its place in the record's artifacts.
	Document string
	// Run does the step's work and says what came of it. rec is the step's draft of the record: what the
	// step changes of it counts once settled (settle.go), and not at all when the step fails.
	Run func(e *Engine, ctx context.Context, ic *issue, rec *Record) (Outcome, error)
}

var (
	always = func(config.Config) bool { return true }
	never  = func(config.Config) bool { return false }
)

// steps is the workflow, in the order the planner tries the rows.
var steps []Step

func init() {
	steps = []Step{
		{Name: workflow.Triage, From: workflow.Backlog, Agent: always, Run: (*Engine).triage},
		{Name: workflow.Research, From: workflow.ResearchNeeded, Running: workflow.ResearchInProgress, Agent: always,
			Document: "research", Run: (*Engine).research},
		{Name: workflow.Plan, From: workflow.ReadyForPlan, Running: workflow.PlanInProgress, Agent: always,
			Document: "plan", Run: (*Engine).plan},
		{Name: workflow.Review, From: workflow.PlanInReview,
			Agent:  func(c config.Config) bool { return c.Review != config.ReviewSkip },
			Person: func(c config.Config) bool { return c.Review == config.ReviewInteractive },
			// A skipped review writes no document (see review).
			Document: "review", Run: (*Engine).review},
		// A parent split into sub-issues is not implemented itself: it follows its sub-issues.
		{Name: workflow.Children, From: workflow.InProgress, When: isParent, Agent: never, Run: (*Engine).children},
		{Name: workflow.Children, From: workflow.InReview, When: isParent, Agent: never, Run: (*Engine).children},
		{Name: workflow.Implement, From: workflow.InProgress, Running: workflow.InProgress, When: phaseLeft, Agent: always,
			Run: (*Engine).implement},
		{Name: workflow.SelfReview, From: workflow.InProgress, Running: workflow.InProgress, When: selfReviewDue, Agent: always,
			Document: "self-review", Run: (*Engine).selfReview},
		{Name: workflow.PR, From: workflow.InProgress, Running: workflow.InProgress, Agent: never, Run: (*Engine).pullRequest},
		{Name: workflow.Merge, From: workflow.InReview, Agent: never, Run: (*Engine).merge},
	}
}

// Steps is the workflow's table of steps, in the order the planner tries them.
func Steps() []Step { return append([]Step(nil), steps...) }

func isParent(rec Record, _ config.Config) bool { return len(rec.Children) > 0 }

func phaseLeft(rec Record, _ config.Config) bool { _, left := rec.phasesLeft(); return left }

// selfReviewDue: every phase is done and the last self-review (if any) did not approve them.
func selfReviewDue(rec Record, c config.Config) bool {
	return c.SelfReview && rec.Artifacts["self-review"].Verdict != "APPROVED"
}

// stepFrom is the step an issue in state s takes under its record and config c: the first matching row
// whose From (or, for a lock state, Running) is s. running says s is the step's lock state.
func stepFrom(s workflow.State, rec Record, c config.Config) (st *Step, running bool) {
	for i := range steps {
		r := &steps[i]
		if r.From != s || (r.When != nil && !r.When(rec, c)) {
			continue
		}
		return r, false
	}
	for i := range steps {
		if r := &steps[i]; r.Running == s && r.Running != r.From {
			return r, true
		}
	}
	return nil, false
}

// stepNamed is the row of step ev (the first, for children); nil when ev is no step.
func stepNamed(ev workflow.Event) *Step {
	for i := range steps {
		if steps[i].Name == ev {
			return &steps[i]
		}
	}
	return nil
}

// running is the state an issue is in while step ev runs ("" when it stays where it was).
func running(ev workflow.Event) workflow.State {
	if st := stepNamed(ev); st != nil {
		return st.Running
	}
	return ""
}

// restartState is the state a step starts from: for a lock state (a taken-over or failed step), the
// waiting state of the step that holds it.
func restartState(s workflow.State) workflow.State {
	for _, r := range steps {
		if r.Running == s && r.Running != r.From {
			return r.From
		}
	}
	return s
}

// documentTitle is the title of a document's comment and link.
func documentTitle(kind string) string {
	switch kind {
	case "research":
		return "Research"
	case "plan":
		return "Plan"
	case "review":
		return "Plan review"
	case "self-review":
		return "Self-review"
	case "triage":
		return "Triage"
	}
	return kind
}
