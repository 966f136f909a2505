// Package workflow is ralph's workflow as data: the states an issue can be in,
// the events that move it, and the table of allowed transitions, derived from
// the declarations of the engine's steps (Declaration, NewTable), that the
// engine checks and the Mermaid diagram is drawn from. It does no I/O.
package workflow

import (
	"fmt"
	"strings"
)

// State is where an issue is in the workflow. Its value is the part of the
// state label after [LabelPrefix].
type State string

// The eleven states, in the order of the SPEC's table.
const (
	Backlog            State = "backlog"
	ResearchNeeded     State = "research-needed"
	ResearchInProgress State = "research-in-progress"
	ReadyForPlan       State = "ready-for-plan"
	PlanInProgress     State = "plan-in-progress"
	PlanInReview       State = "plan-in-review"
	InProgress         State = "in-progress"
	InReview           State = "in-review"
	Done               State = "done"
	HumanNeeded        State = "human-needed"
	Canceled           State = "canceled"
)

// Labels that are not states.
const (
	// LabelPrefix starts every label ralph owns.
	LabelPrefix = "ralph:"
	// LabelBuild enrolls an issue. It stays on the issue for its whole life,
	// so it is never read as a state.
	LabelBuild = LabelPrefix + "build"
	// LabelNeedsIteration marks an issue whose last plan was sent back.
	LabelNeedsIteration = LabelPrefix + "needs-iteration"
)

// States returns all states in the SPEC's table order. It returns a new slice
// on every call, so a caller may change it.
func States() []State {
	return []State{
		Backlog, ResearchNeeded, ResearchInProgress, ReadyForPlan, PlanInProgress,
		PlanInReview, InProgress, InReview, Done, HumanNeeded, Canceled,
	}
}

// Label returns the issue label that records s, e.g. "ralph:research-needed".
func (s State) Label() string { return LabelPrefix + string(s) }

// Title returns the state's name as people read it, e.g. "Research Needed".
// A state that is not valid is returned as it is, so that an error message
// about it still shows what was seen.
func (s State) Title() string {
	switch s {
	case Backlog:
		return "Backlog"
	case ResearchNeeded:
		return "Research Needed"
	case ResearchInProgress:
		return "Research in Progress"
	case ReadyForPlan:
		return "Ready for Plan"
	case PlanInProgress:
		return "Plan in Progress"
	case PlanInReview:
		return "Plan in Review"
	case InProgress:
		return "In Progress"
	case InReview:
		return "In Review"
	case Done:
		return "Done"
	case HumanNeeded:
		return "Human Needed"
	case Canceled:
		return "Canceled"
	}
	return string(s)
}

// Valid reports whether s is one of the eleven states.
func (s State) Valid() bool {
	for _, v := range States() {
		if s == v {
			return true
		}
	}
	return false
}

// StateFromLabel returns the state a label records. Only the eleven state
// labels count: [LabelBuild], [LabelNeedsIteration] and labels of other tools
// report false. The match is exact because ralph creates its labels itself.
func StateFromLabel(label string) (State, bool) {
	name, ok := strings.CutPrefix(label, LabelPrefix)
	if !ok {
		return "", false
	}
	s := State(name)
	if !s.Valid() {
		return "", false
	}
	return s, true
}

// Kind says what the engine may do with an issue in a state.
type Kind int

const (
	// Waiting: a step is to do, and any run may start it.
	Waiting Kind = iota
	// Lock: a run holds the issue while its step runs.
	Lock
	// Gate: the issue waits for something outside ralph (a person, or a
	// pull request being merged).
	Gate
	// Terminal: nothing more happens.
	Terminal
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case Waiting:
		return "waiting"
	case Lock:
		return "lock"
	case Gate:
		return "gate"
	case Terminal:
		return "terminal"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Kind returns the kind of s.
//
// InProgress is Waiting, because an implement or pr step is always to do from
// it; it also serves as the lock state while that step runs (the SPEC gives
// those steps no separate lock state), so the engine must rely on its own lock
// rather than on the label to tell a running phase from a waiting one.
//
// PlanInReview is a Gate here even though only interactive review waits for
// a person: whether to run the review step at once depends on the config,
// which is the engine's business, not the table's.
//
// A state that is not valid reports Terminal, so that code which forgets to
// call Valid does nothing with it rather than run a step.
func (s State) Kind() Kind {
	switch s {
	case Backlog, ResearchNeeded, ReadyForPlan, InProgress:
		return Waiting
	case ResearchInProgress, PlanInProgress:
		return Lock
	case PlanInReview, InReview, HumanNeeded:
		return Gate
	}
	return Terminal
}

// Event is what moves an issue: a step that ran, or a person's action.
type Event string

// The events. Triage through Merge are the steps, one per run; the rest are
// bookkeeping and a person's actions.
const (
	Enroll    Event = "enroll"
	Triage    Event = "triage"
	Research  Event = "research"
	Plan      Event = "plan"
	Review    Event = "review"
	Implement Event = "implement"
	// SelfReview: the agent reviews the whole branch against the plan before the pull request opens.
	SelfReview Event = "self-review"
	PR         Event = "pr"
	Merge      Event = "merge"
	// Start: a step begins, moving a waiting state to its lock state.
	Start Event = "start"
	// Abort: a step failed or was interrupted, moving a lock state back to
	// the state the step started from.
	Abort   Event = "abort"
	Approve Event = "approve"
	Reject  Event = "reject"
	Retry   Event = "retry"
	// Escalate: to Human Needed, after too many failures or send-backs, or
	// when the state labels cannot be resolved. A pull request closed
	// unmerged is Merge's business, not Escalate's.
	Escalate Event = "escalate"
	// Children: a parent issue, split into sub-issues at triage, follows its children: In Review when all
	// are In Review or Done, Done when all are Done.
	Children Event = "children"
	// Fix: a review that asks for changes, `/ralph fix`, or failing checks on ralph's pull request send
	// the issue back to work, with a fix phase, on the same branch and pull request.
	Fix Event = "fix"
)

// TransitionError is a move that is not in the table. The engine branches on
// it to tell a bug or a race (someone changed the labels) from other failures.
type TransitionError struct {
	From  State
	Event Event
	To    State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("workflow: %q cannot move an issue from %s to %s", e.Event, describe(e.From), describe(e.To))
}

// describe names a state for an error message; "" is the not-enrolled state.
func describe(s State) string {
	switch {
	case s == "":
		return "(not enrolled)"
	case s.Valid():
		return s.Title()
	}
	return fmt.Sprintf("unknown state %q", string(s))
}

// StatesFromLabels lists the state labels among labels, as states, in their order.
func StatesFromLabels(labels []string) []State {
	var states []State
	for _, l := range labels {
		if s, ok := StateFromLabel(l); ok {
			states = append(states, s)
		}
	}
	return states
}
