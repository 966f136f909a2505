package workflow

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// allEvents is every event, written out here rather than taken from the
// package so that a forgotten event shows up as a difference.
var allEvents = []Event{
	Enroll, Triage, Research, Plan, Review, Implement, SelfReview, PR, Merge,
	Start, Abort, Approve, Reject, Retry, Escalate, Children, Fix,
}

// specTable is SPEC §1 written a second way: (from, event) → the states it may
// reach. Escalate and Retry are added by wantTransitions from their rule.
var specTable = map[State]map[Event][]State{
	"":                 {Enroll: {Backlog, ResearchNeeded, ReadyForPlan}},
	Backlog:            {Triage: {ResearchNeeded, ReadyForPlan, Done, Canceled, InProgress}},
	ResearchNeeded:     {Start: {ResearchInProgress}},
	ReadyForPlan:       {Start: {PlanInProgress}},
	ResearchInProgress: {Research: {ReadyForPlan}, Abort: {ResearchNeeded}},
	PlanInProgress:     {Plan: {PlanInReview}, Abort: {ReadyForPlan}},
	PlanInReview: {
		Review:  {InProgress, ReadyForPlan, HumanNeeded},
		Approve: {InProgress},
		Reject:  {ReadyForPlan, HumanNeeded},
	},
	InProgress: {Implement: {InProgress}, SelfReview: {InProgress}, PR: {InReview}, Children: {InReview, Done}, Fix: {InProgress}},
	InReview:   {Merge: {Done, HumanNeeded}, Children: {Done}, Fix: {InProgress}},
}

func wantTransitions() map[Transition]bool {
	want := map[Transition]bool{}
	for from, byEvent := range specTable {
		for ev, tos := range byEvent {
			for _, to := range tos {
				want[Transition{from, ev, to}] = true
			}
		}
	}
	// The rule for Escalate and Retry is written against the SPEC's kinds,
	// not against Kind(), so a wrong Kind cannot hide a wrong row.
	terminal := map[State]bool{Done: true, Canceled: true}
	lock := map[State]bool{ResearchInProgress: true, PlanInProgress: true}
	for _, s := range States() {
		if terminal[s] || s == HumanNeeded {
			continue
		}
		want[Transition{s, Escalate, HumanNeeded}] = true
		if !lock[s] {
			want[Transition{HumanNeeded, Retry, s}] = true
		}
	}
	return want
}

func TestTransitionsMatchSpec(t *testing.T) {
	want := wantTransitions()
	got := map[Transition]bool{}
	for _, tr := range Transitions() {
		if got[tr] {
			t.Errorf("Transitions() lists %v twice", tr)
		}
		got[tr] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transitions() differs from SPEC §1 (-want +got):\n%s", diff)
	}
	if n := len(want); n != 44 {
		t.Errorf("the SPEC table has %d rows, this test expected 44: check specTable", n)
	}
}

func TestCheckAcceptsEveryTransition(t *testing.T) {
	for tr := range wantTransitions() {
		if err := Check(tr.From, tr.Event, tr.To); err != nil {
			t.Errorf("Check(%q, %q, %q) = %v, want nil", tr.From, tr.Event, tr.To, err)
		}
	}
}

func TestCheckRefusesEverythingElse(t *testing.T) {
	want := wantTransitions()
	// "" is the not-enrolled state, "bogus" a state and event that do not exist.
	states := append([]State{"", "bogus"}, States()...)
	events := append([]Event{"", "bogus"}, allEvents...)
	refused := 0
	for _, from := range states {
		for _, ev := range events {
			for _, to := range states {
				if want[Transition{from, ev, to}] {
					continue
				}
				err := Check(from, ev, to)
				var te *TransitionError
				if !errors.As(err, &te) {
					t.Errorf("Check(%q, %q, %q) = %v, want a *TransitionError", from, ev, to, err)
					continue
				}
				if diff := cmp.Diff(TransitionError{from, ev, to}, *te); diff != "" {
					t.Errorf("Check(%q, %q, %q) error fields (-want +got):\n%s", from, ev, to, diff)
				}
				refused++
			}
		}
	}
	// 13 states × 19 events × 13 states, minus the allowed rows.
	if wantRefused := 13*19*13 - len(want); refused != wantRefused {
		t.Errorf("swept %d refused triples, want %d", refused, wantRefused)
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

func TestTransitionsReturnsACopy(t *testing.T) {
	first := Transitions()
	first[0] = Transition{Done, Enroll, Done}
	if err := Check(Done, Enroll, Done); err == nil {
		t.Error("changing the slice Transitions returned changed the table")
	}
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

func TestMermaidGolden(t *testing.T) {
	tests := []struct {
		name    string
		current State
	}{
		{"none", ""},
		{"in-progress", InProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Mermaid(tt.current)
			file := filepath.Join("testdata", "mermaid-"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Mermaid(%q) differs from %s (-want +got):\n%s", tt.current, file, diff)
			}
		})
	}
}

var (
	mermaidEdge  = regexp.MustCompile(`^    (\S+) --> (\S+): (.+)$`)
	mermaidState = regexp.MustCompile(`^    ([A-Za-z]+): (.+)$`)
)

// TestMermaidDrawsTheTable checks the diagram against Transitions
// independently of the golden file: every state is declared with its title,
// every allowed move is an edge carrying its event, and no edge is invented.
func TestMermaidDrawsTheTable(t *testing.T) {
	diagram := Mermaid("")
	lines := strings.Split(strings.TrimSuffix(diagram, "\n"), "\n")
	if lines[0] != "stateDiagram-v2" {
		t.Fatalf("first line = %q, want stateDiagram-v2", lines[0])
	}
	titles := map[string]string{}
	type pair struct{ from, to string }
	edges := map[pair][]string{}
	for _, line := range lines[1:] {
		if m := mermaidEdge.FindStringSubmatch(line); m != nil {
			p := pair{m[1], m[2]}
			if _, dup := edges[p]; dup {
				t.Errorf("edge %s --> %s drawn twice", m[1], m[2])
			}
			edges[p] = strings.Split(m[3], ", ")
			continue
		}
		if m := mermaidState.FindStringSubmatch(line); m != nil {
			titles[m[1]] = m[2]
			continue
		}
		t.Errorf("unexpected line %q", line)
	}

	ids := map[State]string{"": "[*]"}
	for _, s := range States() {
		var id string
		for id2, title := range titles {
			if title == s.Title() {
				id = id2
			}
		}
		if id == "" {
			t.Errorf("state %q (%s) is not in the diagram", s, s.Title())
			continue
		}
		ids[s] = id
		onEdge := false
		for p := range edges {
			if p.from == id || p.to == id {
				onEdge = true
			}
		}
		if !onEdge {
			t.Errorf("state %s has no edge", id)
		}
	}

	drawn := 0
	for _, tr := range Transitions() {
		labels, ok := edges[pair{ids[tr.From], ids[tr.To]}]
		if !ok || !slices.Contains(labels, string(tr.Event)) {
			t.Errorf("%q --%s--> %q is not drawn", tr.From, tr.Event, tr.To)
		}
	}
	for _, labels := range edges {
		drawn += len(labels)
	}
	if drawn != len(Transitions()) {
		t.Errorf("diagram has %d edge labels, the table %d transitions", drawn, len(Transitions()))
	}
}

func TestMermaidHighlight(t *testing.T) {
	for _, s := range States() {
		d := Mermaid(s)
		want := "    class " + mermaidID(s) + " current\n"
		if !strings.Contains(d, want) || !strings.Contains(d, "classDef current ") {
			t.Errorf("Mermaid(%q) does not highlight it:\n%s", s, d)
		}
		if strings.Count(d, "    class ") != 1 {
			t.Errorf("Mermaid(%q) highlights more than one state", s)
		}
	}
	for _, s := range []State{"", "bogus"} {
		if d := Mermaid(s); strings.Contains(d, "class") {
			t.Errorf("Mermaid(%q) highlights something:\n%s", s, d)
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
