package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Result is what one run did to one issue.
type Result struct {
	Issue int
	Step  workflow.Event // the step that ran (or would run, in a dry run); "" when none
	From  workflow.State
	State workflow.State
	PRURL string
	// Paused: the issue now waits for a person (a gate).
	Paused bool
	// Continue: another step can run right away, so the Action dispatches its workflow again.
	Continue bool
	Message  string
	Held     bool // another run holds the issue; nothing was done
	// Usage is what the agent used in the step (nil when no agent ran, or it ran without the gateway and
	// reports nothing); Total is the issue's total so far.
	Usage, Total *agent.Usage
	// Budget names the budget that stopped the step ("budget.issue", …): the issue now waits for a person.
	Budget string
	// Dispatch lists other issues that can take a step now because of this one: sub-issues a split created
	// or unblocked, or the parent of a sub-issue that moved. The Action dispatches a run for each.
	Dispatch []int
	// Refused are the hosts ralph's network proxy refused the step's agent and verify commands, each once
	// (the agent chose them: quote them inert).
	Refused []string
	// Unverified are the commits ralph pushed in the step that GitHub did not verify ("sha: reason"); a
	// ruleset requiring signed commits refuses them (on GHES: web commit signing is off).
	Unverified []string
	// Recorded: the request failed, and ralph recorded the failure on the issue (its record says what comes
	// next, a retry or a person), so no run is dispatched to finish it.
	Recorded bool
	// Finish: the request failed on GitHub failing for a while, and the door (Request.Finishable)
	// dispatches a run of ActFinish for the issue. Unfinished says why none is dispatched when one would
	// be (the count of such runs could not be kept, or ran out): the next sweep takes the issue.
	Finish     bool
	Unfinished error
	// Acted is the result of a person's command when the step it made ready ran in the same call (this
	// Result is the step's); nil otherwise.
	Acted *Result
}
