package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNewTableDerivesTheMoves: a declaration's moves leave its lock state (entered by Start, left by Abort)
// or, without one, its From; Escalate and Retry follow their rules; nothing else is allowed.
func TestNewTableDerivesTheMoves(t *testing.T) {
	tab := NewTable([]Declaration{
		{Event: Enroll, To: []State{ResearchNeeded}},
		{Event: Research, From: ResearchNeeded, Running: ResearchInProgress, To: []State{ReadyForPlan}},
		{Event: Implement, From: InProgress, Running: InProgress, Guard: "phases left", To: []State{InProgress}},
		{Event: PR, From: InProgress, Running: InProgress, To: []State{InReview}},
	})
	want := []Transition{
		{"", Enroll, ResearchNeeded},
		{ResearchNeeded, Start, ResearchInProgress},
		{ResearchInProgress, Abort, ResearchNeeded},
		{ResearchInProgress, Research, ReadyForPlan},
		{InProgress, Implement, InProgress},
		{InProgress, PR, InReview},
	}
	for _, s := range States() {
		if s.Kind() != Terminal && s != HumanNeeded {
			want = append(want, Transition{s, Escalate, HumanNeeded})
		}
	}
	for _, s := range []State{Backlog, ResearchNeeded, ReadyForPlan, PlanInReview, InProgress, InReview} {
		want = append(want, Transition{HumanNeeded, Retry, s})
	}
	if diff := cmp.Diff(want, tab.Transitions()); diff != "" {
		t.Errorf("Transitions() (-want +got):\n%s", diff)
	}
	if err := tab.Check(InProgress, Implement, InReview); !errors.As(err, new(*TransitionError)) {
		t.Errorf("Check of an undeclared move = %v, want a *TransitionError", err)
	}
	if err := tab.Check(InProgress, PR, InReview); err != nil {
		t.Errorf("Check of a declared move = %v", err)
	}
	if got := tab.Guard(Transition{InProgress, Implement, InProgress}); got != "phases left" {
		t.Errorf("Guard = %q, want the declaration's", got)
	}
	if d := tab.Mermaid(""); !strings.Contains(d, "InProgress --> InProgress: implement (phases left)\n") {
		t.Errorf("the diagram does not name the guard:\n%s", d)
	}
	got := tab.Transitions()
	got[0] = Transition{Done, Enroll, Done}
	if err := tab.Check(Done, Enroll, Done); err == nil {
		t.Error("changing the slice Transitions returned changed the table")
	}
}

func TestTransitionErrorMessage(t *testing.T) {
	tests := []struct {
		err  TransitionError
		want string
	}{
		{TransitionError{ReadyForPlan, Plan, Done}, `workflow: "plan" cannot move an issue from Ready for Plan to Done`},
		{TransitionError{"", Triage, Backlog}, `workflow: "triage" cannot move an issue from (not enrolled) to Backlog`},
		{TransitionError{"weird", Retry, ResearchInProgress}, `workflow: "retry" cannot move an issue from unknown state "weird" to Research in Progress`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestStatesReturnsACopy(t *testing.T) {
	states := States()
	states[0] = "changed"
	if States()[0] != Backlog {
		t.Error("changing the slice States returned changed the states")
	}
}

func TestStates(t *testing.T) {
	tests := []struct {
		state State
		label string
		title string
		kind  Kind
	}{
		{Backlog, "ralph:backlog", "Backlog", Waiting},
		{ResearchNeeded, "ralph:research-needed", "Research Needed", Waiting},
		{ResearchInProgress, "ralph:research-in-progress", "Research in Progress", Lock},
		{ReadyForPlan, "ralph:ready-for-plan", "Ready for Plan", Waiting},
		{PlanInProgress, "ralph:plan-in-progress", "Plan in Progress", Lock},
		{PlanInReview, "ralph:plan-in-review", "Plan in Review", Gate},
		{InProgress, "ralph:in-progress", "In Progress", Waiting},
		{InReview, "ralph:in-review", "In Review", Gate},
		{Done, "ralph:done", "Done", Terminal},
		{HumanNeeded, "ralph:human-needed", "Human Needed", Gate},
		{Canceled, "ralph:canceled", "Canceled", Terminal},
	}
	var order []State
	for _, tt := range tests {
		order = append(order, tt.state)
		if got := tt.state.Label(); got != tt.label {
			t.Errorf("%q.Label() = %q, want %q", tt.state, got, tt.label)
		}
		if got := tt.state.Title(); got != tt.title {
			t.Errorf("%q.Title() = %q, want %q", tt.state, got, tt.title)
		}
		if got := tt.state.Kind(); got != tt.kind {
			t.Errorf("%q.Kind() = %v, want %v", tt.state, got, tt.kind)
		}
		if !tt.state.Valid() {
			t.Errorf("%q.Valid() = false, want true", tt.state)
		}
		got, ok := StateFromLabel(tt.state.Label())
		if !ok || got != tt.state {
			t.Errorf("StateFromLabel(%q) = %q, %v, want %q, true", tt.state.Label(), got, ok, tt.state)
		}
	}
	if diff := cmp.Diff(order, States()); diff != "" {
		t.Errorf("States() is not the SPEC's order (-want +got):\n%s", diff)
	}
}

func TestInvalidStates(t *testing.T) {
	for _, s := range []State{"", "bogus", "Backlog", "ralph:backlog", "build", "needs-iteration"} {
		if s.Valid() {
			t.Errorf("%q.Valid() = true, want false", s)
		}
		if got := s.Kind(); got != Terminal {
			t.Errorf("%q.Kind() = %v, want terminal so nothing runs", s, got)
		}
	}
}

func TestStateFromLabelRefuses(t *testing.T) {
	for _, label := range []string{
		LabelBuild, LabelNeedsIteration, LabelPrefix, "", "backlog", "ralph:Backlog",
		"ralph: backlog", "ralph:backlog ", "other:backlog", "ralph:ralph:backlog",
	} {
		if s, ok := StateFromLabel(label); ok {
			t.Errorf("StateFromLabel(%q) = %q, true, want false", label, s)
		}
	}
}

func TestLabelConstants(t *testing.T) {
	for got, want := range map[string]string{
		LabelPrefix:         "ralph:",
		LabelBuild:          "ralph:build",
		LabelNeedsIteration: "ralph:needs-iteration",
	} {
		if got != want {
			t.Errorf("label constant = %q, want %q", got, want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Waiting: "waiting", Lock: "lock", Gate: "gate", Terminal: "terminal", Kind(9): "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestStatesFromLabels(t *testing.T) {
	got := StatesFromLabels([]string{"bug", "ralph:build", "ralph:in-review", "ralph:done", "ralph:nope"})
	if diff := cmp.Diff([]State{InReview, Done}, got); diff != "" {
		t.Errorf("StatesFromLabels (-want +got):\n%s", diff)
	}
	if got := StatesFromLabels(nil); len(got) != 0 {
		t.Errorf("StatesFromLabels(nil) = %v", got)
	}
}
