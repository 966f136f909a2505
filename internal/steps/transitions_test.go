package steps

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The workflow's legal moves, as New derives them from the steps' declarations (steps.go), held against
// SPEC §1; and the diagram drawn from them.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// allEvents is every event, written out here rather than taken from the
// package so that a forgotten event shows up as a difference.
var allEvents = []workflow.Event{
	workflow.Enroll, workflow.Triage, workflow.Research, workflow.Plan, workflow.Review, workflow.Implement, workflow.SelfReview, workflow.PR, workflow.Merge,
	workflow.Start, workflow.Abort, workflow.Approve, workflow.Reject, workflow.Retry, workflow.Escalate, workflow.Children, workflow.Fix,
	SecurityReview,
}

// specTable is SPEC §1 written a second way: (from, event) → the states it may
// reach. Escalate and Retry are added by wantTransitions from their rule.
var specTable = map[workflow.State]map[workflow.Event][]workflow.State{
	"":                          {workflow.Enroll: {workflow.Backlog, workflow.ResearchNeeded, workflow.ReadyForPlan}},
	workflow.Backlog:            {workflow.Triage: {workflow.ResearchNeeded, workflow.ReadyForPlan, workflow.Done, workflow.Canceled, workflow.InProgress}},
	workflow.ResearchNeeded:     {workflow.Start: {workflow.ResearchInProgress}},
	workflow.ReadyForPlan:       {workflow.Start: {workflow.PlanInProgress}},
	workflow.ResearchInProgress: {workflow.Research: {workflow.ReadyForPlan}, workflow.Abort: {workflow.ResearchNeeded}},
	workflow.PlanInProgress:     {workflow.Plan: {workflow.PlanInReview}, workflow.Abort: {workflow.ReadyForPlan}},
	workflow.PlanInReview: {
		workflow.Review:  {workflow.InProgress, workflow.ReadyForPlan, workflow.HumanNeeded},
		workflow.Approve: {workflow.InProgress},
		workflow.Reject:  {workflow.ReadyForPlan, workflow.HumanNeeded},
	},
	workflow.InProgress: {workflow.Implement: {workflow.InProgress}, workflow.SelfReview: {workflow.InProgress}, SecurityReview: {workflow.InProgress}, workflow.PR: {workflow.InReview}, workflow.Children: {workflow.InReview, workflow.Done}, workflow.Fix: {workflow.InProgress}},
	workflow.InReview:   {workflow.Merge: {workflow.Done, workflow.HumanNeeded}, workflow.Children: {workflow.Done}, workflow.Fix: {workflow.InProgress}},
}

func wantTransitions() map[workflow.Transition]bool {
	want := map[workflow.Transition]bool{}
	for from, byEvent := range specTable {
		for ev, tos := range byEvent {
			for _, to := range tos {
				want[workflow.Transition{From: from, Event: ev, To: to}] = true
			}
		}
	}
	// The rule for Escalate and Retry is written against the SPEC's kinds,
	// not against Kind(), so a wrong Kind cannot hide a wrong row.
	terminal := map[workflow.State]bool{workflow.Done: true, workflow.Canceled: true}
	lock := map[workflow.State]bool{workflow.ResearchInProgress: true, workflow.PlanInProgress: true}
	for _, s := range workflow.States() {
		if terminal[s] || s == workflow.HumanNeeded {
			continue
		}
		want[workflow.Transition{From: s, Event: workflow.Escalate, To: workflow.HumanNeeded}] = true
		if !lock[s] {
			want[workflow.Transition{From: workflow.HumanNeeded, Event: workflow.Retry, To: s}] = true
		}
	}
	return want
}

func TestTransitionsMatchSpec(t *testing.T) {
	want := wantTransitions()
	got := map[workflow.Transition]bool{}
	for _, tr := range testTable().Flow.Transitions() {
		if got[tr] {
			t.Errorf("Transitions() lists %v twice", tr)
		}
		got[tr] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transitions() differs from SPEC §1 (-want +got):\n%s", diff)
	}
	if n := len(want); n != 45 {
		t.Errorf("the SPEC table has %d rows, this test expected 45: check specTable", n)
	}
}

func TestCheckAcceptsEveryTransition(t *testing.T) {
	for tr := range wantTransitions() {
		if err := testTable().Flow.Check(tr.From, tr.Event, tr.To); err != nil {
			t.Errorf("testTable().Flow.Check(%q, %q, %q) = %v, want nil", tr.From, tr.Event, tr.To, err)
		}
	}
}

func TestCheckRefusesEverythingElse(t *testing.T) {
	want := wantTransitions()
	// "" is the not-enrolled state, "bogus" a state and event that do not exist.
	states := append([]workflow.State{"", "bogus"}, workflow.States()...)
	events := append([]workflow.Event{"", "bogus"}, allEvents...)
	refused := 0
	for _, from := range states {
		for _, ev := range events {
			for _, to := range states {
				if want[workflow.Transition{From: from, Event: ev, To: to}] {
					continue
				}
				err := testTable().Flow.Check(from, ev, to)
				var te *workflow.TransitionError
				if !errors.As(err, &te) {
					t.Errorf("testTable().Flow.Check(%q, %q, %q) = %v, want a *TransitionError", from, ev, to, err)
					continue
				}
				if diff := cmp.Diff(workflow.TransitionError{From: from, Event: ev, To: to}, *te); diff != "" {
					t.Errorf("testTable().Flow.Check(%q, %q, %q) error fields (-want +got):\n%s", from, ev, to, diff)
				}
				refused++
			}
		}
	}
	// 13 states × 20 events × 13 states, minus the allowed rows.
	if wantRefused := 13*20*13 - len(want); refused != wantRefused {
		t.Errorf("swept %d refused triples, want %d", refused, wantRefused)
	}
}

func TestTransitionsReturnsACopy(t *testing.T) {
	first := testTable().Flow.Transitions()
	first[0] = workflow.Transition{From: workflow.Done, Event: workflow.Enroll, To: workflow.Done}
	if err := testTable().Flow.Check(workflow.Done, workflow.Enroll, workflow.Done); err == nil {
		t.Error("changing the slice Transitions returned changed the table")
	}
}

func TestMermaidGolden(t *testing.T) {
	tests := []struct {
		name    string
		current workflow.State
	}{
		{"none", ""},
		{"in-progress", workflow.InProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testTable().Flow.Mermaid(tt.current)
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
				t.Errorf("testTable().Flow.Mermaid(%q) differs from %s (-want +got):\n%s", tt.current, file, diff)
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
	diagram := testTable().Flow.Mermaid("")
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

	ids := map[workflow.State]string{"": "[*]"}
	for _, s := range workflow.States() {
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
	for _, tr := range testTable().Flow.Transitions() {
		labels, ok := edges[pair{ids[tr.From], ids[tr.To]}]
		if !ok || !slices.ContainsFunc(labels, func(l string) bool { return strings.Split(l, " (")[0] == string(tr.Event) }) {
			t.Errorf("%q --%s--> %q is not drawn", tr.From, tr.Event, tr.To)
		}
	}
	for _, labels := range edges {
		drawn += len(labels)
	}
	if drawn != len(testTable().Flow.Transitions()) {
		t.Errorf("diagram has %d edge labels, the table %d transitions", drawn, len(testTable().Flow.Transitions()))
	}
}

func TestMermaidHighlight(t *testing.T) {
	for _, s := range workflow.States() {
		d := testTable().Flow.Mermaid(s)
		want := "    class " + mermaidID(s) + " current\n"
		if !strings.Contains(d, want) || !strings.Contains(d, "classDef current ") {
			t.Errorf("testTable().Flow.Mermaid(%q) does not highlight it:\n%s", s, d)
		}
		if strings.Count(d, "    class ") != 1 {
			t.Errorf("testTable().Flow.Mermaid(%q) highlights more than one state", s)
		}
	}
	for _, s := range []workflow.State{"", "bogus"} {
		if d := testTable().Flow.Mermaid(s); strings.Contains(d, "class") {
			t.Errorf("testTable().Flow.Mermaid(%q) highlights something:\n%s", s, d)
		}
	}
}

// mermaidID is how the diagram names s: "research-needed" is ResearchNeeded.
func mermaidID(s workflow.State) string {
	var b strings.Builder
	for _, word := range strings.Split(string(s), "-") {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

// TestEveryDeclarationBound: every step's declaration is bound to its behaviour (a run function, an agent
// rule, moves the workflow allows), every state it declares is a state, and every guard is named in the
// diagram, on the edges of the moves it guards.
func TestEveryDeclarationBound(t *testing.T) {
	tab := testTable()
	diagram := tab.Flow.Mermaid("")
	guards := 0
	for _, st := range tab.steps {
		if st.Do == nil || st.Agent == nil {
			t.Errorf("step %s is declared but not bound to a run function and an agent rule", st.Name)
		}
		if (st.Guard.Name == "") != (st.Guard.Holds == nil) {
			t.Errorf("step %s: a guard needs both a name and a condition, got %q", st.Name, st.Guard.Name)
		}
		where := st.From
		if st.Running != "" {
			where = st.Running
		}
		for _, to := range st.To {
			if !to.Valid() {
				t.Errorf("step %s declares %q, not a state", st.Name, to)
			}
			if err := tab.Flow.Check(where, st.Name, to); err != nil {
				t.Errorf("step %s: its declared move is not in the table: %v", st.Name, err)
			}
			if st.Guard.Name == "" {
				continue
			}
			guards++
			edge := fmt.Sprintf("    %s --> %s: ", mermaidID(where), mermaidID(to))
			label := fmt.Sprintf("%s (%s)", st.Name, st.Guard.Name)
			i := strings.Index(diagram, edge)
			if i < 0 || !slices.Contains(strings.Split(strings.SplitN(diagram[i+len(edge):], "\n", 2)[0], ", "), label) {
				t.Errorf("the diagram does not name the guard of %s: no edge %s carries %q", st.Name, strings.TrimSpace(edge), label)
			}
		}
	}
	if guards == 0 {
		t.Error("no step declares a guard: the test checks nothing")
	}
}
