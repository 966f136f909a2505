package sweep

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// ChainRuns names the issues of the chain workflow's runs that a dispatch or a label started, titled as
// examples/ralph.yml's run-name titles a run on one issue, and nothing else.
func TestChainRuns(t *testing.T) {
	const wf = ".github/workflows/ralph.yml"
	runs := []ghapi.WorkflowRun{
		{ID: 1, Status: "queued", DisplayTitle: "ralph #47", Path: wf, Event: "workflow_dispatch"},
		{ID: 2, Status: "in_progress", DisplayTitle: "ralph #3", Path: wf, Event: "issues"},
		{ID: 3, Status: "in_progress", DisplayTitle: "ralph schedule", Path: wf, Event: "schedule"},
		{ID: 4, Status: "queued", DisplayTitle: "ralph #", Path: wf, Event: "workflow_dispatch"},
		{ID: 5, Status: "queued", DisplayTitle: "CI #12", Path: wf, Event: "workflow_dispatch"},
		{ID: 6, Status: "queued", DisplayTitle: "ralph #x", Path: wf, Event: "workflow_dispatch"},
		// Titles anyone can make: a fork's pull request titled so, in CI (no run-name), waiting for
		// approval; a comment's run on an issue.
		{ID: 7, Status: "waiting", DisplayTitle: "ralph #8", Path: ".github/workflows/ci.yml", Event: "pull_request"},
		{ID: 8, Status: "queued", DisplayTitle: "ralph #9", Path: wf, Event: "issue_comment"},
	}
	got := ChainRuns(runs, wf)
	if diff := cmp.Diff(map[int]bool{47: true, 3: true}, got); diff != "" {
		t.Errorf("ChainRuns (-want +got):\n%s", diff)
	}
}
