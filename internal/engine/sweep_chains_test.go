package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// ChainRuns names the issues of runs titled as examples/ralph.yml's run-name titles a run on one issue,
// and nothing else.
func TestChainRuns(t *testing.T) {
	runs := []ghapi.WorkflowRun{
		{ID: 1, Status: "queued", DisplayTitle: "ralph #47"},
		{ID: 2, Status: "in_progress", DisplayTitle: "ralph #3"},
		{ID: 3, Status: "in_progress", DisplayTitle: "ralph schedule"},
		{ID: 4, Status: "queued", DisplayTitle: "ralph #"},
		{ID: 5, Status: "queued", DisplayTitle: "CI #12"},
		{ID: 6, Status: "queued", DisplayTitle: "ralph #x"},
	}
	got := ChainRuns(runs)
	if diff := cmp.Diff(map[int]bool{47: true, 3: true}, got); diff != "" {
		t.Errorf("ChainRuns (-want +got):\n%s", diff)
	}
}
