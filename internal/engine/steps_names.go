package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/steps"
)

// The workflow's steps, their table and the planner are internal/steps'; the engine's pipeline and its
// callers name them without the package.
type (
	table       = steps.Table
	Step        = steps.Step
	Guard       = steps.Guard
	Document    = steps.Document
	Outcome     = steps.Outcome
	Waiting     = steps.Waiting
	Escalation  = steps.Escalation
	Notice      = steps.Notice
	FixRequest  = steps.FixRequest
	Decision    = steps.Decision
	Facts       = steps.Facts
	Wait        = steps.Wait
	Reviews     = steps.Reviews
	CheckLister = steps.CheckLister
	// Session is the agent's session for one step.
	Session = steps.Session
	// Signing says whether GitHub will find ralph's commits signed.
	Signing = steps.Signing
)

// What an issue waits for (steps.Wait).
const (
	NoWait          = steps.NoWait
	WaitPerson      = steps.WaitPerson
	WaitApproval    = steps.WaitApproval
	WaitPullRequest = steps.WaitPullRequest
	WaitSubIssues   = steps.WaitSubIssues
	WaitBlockers    = steps.WaitBlockers
	WaitReopen      = steps.WaitReopen
	Finished        = steps.Finished
	WaitSplit       = steps.WaitSplit
	WaitWriter      = steps.WaitWriter
)

// What asks for a fix (steps.FixRequest's Kind).
const (
	FixReview  = steps.FixReview
	FixComment = steps.FixComment
	FixCI      = steps.FixCI
)

// ParseVerdict reads a review's verdict (steps.ParseVerdict).
func ParseVerdict(doc string) (string, error) { return steps.ParseVerdict(doc) }

// Ready says whether an issue with labels can take a step of ralph's now (steps.Ready).
func Ready(labels []string, cfg config.Config) bool { return steps.Ready(labels, cfg) }
