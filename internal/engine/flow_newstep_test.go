package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowANewStepIsOneRow: a step added as one row and its run function (export_test.go's probe) is taken
// by the planner, recorded, and listed wherever the engine lists steps and documents, with no other edit. The
// table is the engine's own (built by New), so the test changes nothing another test reads.
func TestFlowANewStepIsOneRow(t *testing.T) {
	t.Parallel()
	const probePath = "thoughts/shared/probes/" + day + "-GH-0001-parse-widgets.md"
	h := newHarness(t, func(c *config.Config) { c.Review, c.Research = config.ReviewSkip, false })
	engine.AddProbeStep(h.eng)
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InReview, 6)

	res := h.advance(n)
	if got, want := res.Step, workflow.Event("probe"); got != want {
		t.Fatalf("step = %q, want %q (Result %+v)", got, want, res)
	}
	if res.State != workflow.InReview || res.Message != "probe: wrote "+probePath {
		t.Errorf("probe Result = %+v", res)
	}
	if inv := h.agent.last(); !strings.HasSuffix(inv.Artifact, probePath) {
		t.Errorf("the agent's artifact = %q, want it at %s", inv.Artifact, probePath)
	}
	if got, ok := h.show(branchOf(n, "parse-widgets"), probePath); !ok || !strings.Contains(got, "VERDICT: APPROVED") {
		t.Errorf("the probe's document on the branch = %q, %v", got, ok)
	}
	if got := len(h.gh.commentsStarting(n, "## Probe")); got != 1 {
		t.Errorf("probe comments = %d, want 1", got)
	}
	h.wantState(n, workflow.InReview)
	status := h.gh.statusBody(n)
	for _, want := range []string{"- [x] Probe\n", "- Probe: [`thoughts/shared/probes/"} {
		if !strings.Contains(status, want) {
			t.Errorf("the status comment does not hold %q:\n%s", want, status)
		}
	}
	if got := engine.DocumentKinds(); slices.Contains(got, "probe") {
		t.Errorf("DocumentKinds() = %v: the probe is this engine's alone, not the workflow's", got)
	}
	rec := h.gh.record(t, n)
	if a := rec.Artifacts["probe"]; a.Path != probePath || a.Comment == "" {
		t.Errorf("probe artifact = %+v", a)
	}

	// Done once, the issue goes on to its next row: the pull request waits for people.
	res = h.advance(n)
	if res.Step != workflow.Merge || !res.Paused || res.State != workflow.InReview {
		t.Errorf("after the probe: Result = %+v, want the merge step waiting", res)
	}
}
