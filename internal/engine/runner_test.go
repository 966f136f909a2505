package engine

import (
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestSnapshotStays: what a step sees of its issue is a copy: the writer moving the issue's labels, state
// and record afterwards (as the write-ahead and the outcome do) changes nothing of it.
func TestSnapshotStays(t *testing.T) {
	t.Parallel()
	ic := &issue{n: 4, gh: ghapi.Issue{Number: 4, Labels: []ghapi.Label{{Name: "ralph:research-in-progress"}, {Name: "ralph:build"}}},
		state: workflow.ResearchInProgress, rec: Record{State: workflow.ResearchNeeded, Rounds: map[string]int{"research": 1}, Phases: []Phase{{Title: "One"}}}}
	snap := ic.snapshot()
	// What setState and write do to the run's issue.
	ic.gh.Labels = ic.gh.Labels[:0]
	ic.gh.Labels = append(ic.gh.Labels, ghapi.Label{Name: "ralph:human-needed"})
	ic.state = workflow.HumanNeeded
	ic.rec.Rounds["research"] = 2
	ic.rec.Phases[0].Title = "Changed"
	ic.rec = Record{State: workflow.HumanNeeded}
	if got := snap.GH.LabelNames(); !slices.Equal(got, []string{"ralph:research-in-progress", "ralph:build"}) {
		t.Errorf("the snapshot's labels moved: %q", got)
	}
	if snap.State != workflow.ResearchInProgress || snap.Rec.State != workflow.ResearchNeeded || snap.Rec.Rounds["research"] != 1 || snap.Rec.Phases[0].Title != "One" {
		t.Errorf("the snapshot changed: %+v", snap)
	}
}
