package engine

import (
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestSnapshotStays: what a step sees of its issue is a copy, with the labels as the writer last set them:
// the writer moving the labels afterwards and anything changing the record's maps and slices in place
// change nothing of it.
func TestSnapshotStays(t *testing.T) {
	t.Parallel()
	gi := ghapi.Issue{Number: 4, Labels: []ghapi.Label{{Name: "ralph:research-needed"}, {Name: "ralph:build"}}}
	w := &writer{n: 4, labels: []string{"ralph:research-in-progress", "ralph:build"}}
	ic := issue{n: 4, gh: gi, w: w, state: workflow.ResearchInProgress,
		rec: Record{State: workflow.ResearchNeeded, Rounds: map[string]int{"research": 1}, Phases: []Phase{{Title: "One"}}}}
	snap := ic.snapshot()
	// What the writer does to its labels, and what a stage that forgot to clone would do to the record.
	w.labels[0] = "ralph:human-needed"
	w.labels = append(w.labels[:1], "ralph:needs-iteration")
	ic.rec.Rounds["research"] = 2
	ic.rec.Phases[0].Title = "Changed"
	if got := snap.GH.LabelNames(); !slices.Equal(got, []string{"ralph:research-in-progress", "ralph:build"}) {
		t.Errorf("the snapshot's labels moved, or are not the writer's: %q", got)
	}
	if snap.State != workflow.ResearchInProgress || snap.Rec.State != workflow.ResearchNeeded || snap.Rec.Rounds["research"] != 1 || snap.Rec.Phases[0].Title != "One" {
		t.Errorf("the snapshot changed: %+v", snap)
	}
}

// TestIssueStagesReturnValues: the stages that change an issue return the changed issue and leave the one
// they were given as it was, its record's maps and slices included.
func TestIssueStagesReturnValues(t *testing.T) {
	t.Parallel()
	e := New(Engine{Config: config.Default(), Log: quietLog{}})
	r := e.reader()
	given := issue{n: 7, gh: ghapi.Issue{Number: 7, Title: "Add a flag", Labels: []ghapi.Label{{Name: "ralph:build"}}},
		rec: Record{Rounds: map[string]int{"plan": 1}, History: []Entry{{Step: "plan", Refused: []string{"example.com"}}}}}
	enrolled, err := r.enroll(given)
	if err != nil {
		t.Fatal(err)
	}
	if enrolled.state != FirstState(e.Config) || enrolled.rec.State != enrolled.state || enrolled.rec.Branch == "" || enrolled.rec.Slug == "" || enrolled.rec.Runs != 1 {
		t.Errorf("enrolled: state %q, record %+v", enrolled.state, enrolled.rec)
	}
	if given.state != "" || given.rec.State != "" || given.rec.Branch != "" || given.rec.Runs != 0 || len(given.rec.History) != 1 || len(given.rec.History[0].Refused) != 1 {
		t.Errorf("enroll changed the issue it was given: state %q, record %+v", given.state, given.rec)
	}
	enrolled.rec.Rounds["plan"] = 5
	if given.rec.Rounds["plan"] != 1 {
		t.Errorf("the enrolled issue's record shares its rounds with the one given")
	}
	in := given.in(workflow.HumanNeeded)
	in.rec.Rounds["plan"] = 9
	if given.state != "" || given.rec.State != "" || given.rec.Rounds["plan"] != 1 {
		t.Errorf("in changed the issue it was given: %q %+v", given.state, given.rec)
	}
	folded, a := foldAttempt(Record{Attempt: &Attempt{Step: "research", Reserved: 2}})
	if a == nil || a.Step != "research" || folded.Attempt != nil || folded.Usage == nil || folded.Usage.CostUSD != 2 {
		t.Errorf("foldAttempt: %+v, %+v", folded, a)
	}
}
