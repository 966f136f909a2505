package engine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// crashAt makes the engine stop (panic) at the k-th time it reaches checkpoint name, runs f, and recovers:
// the process died between two writes.
func crashAt(t *testing.T, h *harness, name string, k int, f func()) {
	t.Helper()
	seen := 0
	h.eng.Checkpoint = func(at string) {
		if at == name {
			seen++
			if seen == k {
				panic("crash at " + at)
			}
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Fatalf("the run did not reach checkpoint %s", name)
		}
	}()
	f()
}

// TestFlowCrashRerun: a run that died between two writes of a document step is repeated by the next run
// without a second commit, a second comment or a second status comment.
func TestFlowCrashRerun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		at     string
		agents int // plan runs in all: a commit not yet pushed is kept in ralph's repository, and the rerun pushes it
	}{
		{"after-commit", 1},
		{"after-push", 1},
		{"after-comment", 1},
		{"after-status", 1},
		{"after-label", 1},
	}
	for _, tt := range tests {
		t.Run(tt.at, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			n := h.enrolled("Parse widgets")
			h.advance(n) // research, so that the status comment exists
			crashAt(t, h, tt.at, 1, func() { h.advance(n) })
			if len(h.lock.acquired) != h.lock.released {
				t.Errorf("the lock was not released by the crashed run: %d acquired, %d released", len(h.lock.acquired), h.lock.released)
			}
			h.eng.Checkpoint = nil
			res := h.advance(n)
			if tt.at == "after-status" || tt.at == "after-label" {
				// The crashed run had recorded the plan (the label is ralph's own, put back silently):
				// this run reviews.
				if res.Step != workflow.Review {
					t.Errorf("rerun Result = %+v", res)
				}
				if strings.Contains(h.gh.statusBody(n), "Labels repaired") {
					t.Errorf("ralph's own label was reported as a repair:\n%s", h.gh.statusBody(n))
				}
			} else if res.Step != workflow.Plan || res.State != workflow.PlanInReview {
				t.Errorf("rerun Result = %+v", res)
			}
			if got := strings.Count(strings.Join(h.agent.commands(), ","), "plan"); got != tt.agents {
				t.Errorf("plan agent runs: %d, want %d", got, tt.agents)
			}
			if diff := cmp.Diff([]string{"ralph: research for #1 Parse widgets", "ralph: plan for #1 Parse widgets"}, h.subjects(branchOf(n, "parse-widgets"))[:2]); diff != "" {
				t.Errorf("commits (-want +got):\n%s", diff)
			}
			if got := h.subjects(branchOf(n, "parse-widgets")); strings.Count(strings.Join(got, "\n"), "ralph: plan for") != 1 {
				t.Errorf("commits: %q", got)
			}
			if got := len(h.gh.commentsStarting(n, "## Implementation Plan")); got != 1 {
				t.Errorf("plan comments: %d", got)
			}
			if got := len(h.gh.commentsStarting(n, record.StatusMarker)); got != 1 {
				t.Errorf("status comments: %d", got)
			}
			rec := h.gh.record(t, n)
			if rec.Rounds["plan"] != 1 || len(rec.Phases) != 2 {
				t.Errorf("record: rounds %v, phases %d", rec.Rounds, len(rec.Phases))
			}
		})
	}
}

// TestFlowCrashPhase: a phase pushed by a run that died before recording it is found on the branch by its
// key, not done again.
func TestFlowCrashPhase(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review = config.ReviewSkip; c.Research = false })
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	crashAt(t, h, "after-push", 1, func() { h.advance(n) })
	h.eng.Checkpoint = nil
	res := h.advance(n)
	if res.Step != workflow.Implement || res.Message != "phase 1 of 2 done" {
		t.Errorf("rerun Result = %+v", res)
	}
	if diff := cmp.Diff([]string{"plan", "implement"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
	head, _ := h.originGit("rev-parse", "refs/heads/"+branchOf(n, "parse-widgets"))
	if rec := h.gh.record(t, n); rec.Phases[0].SHA != head {
		t.Errorf("phase 1's SHA = %q, want the pushed %s", rec.Phases[0].SHA, head)
	}
}

// TestFlowCrashPullRequest: a pull request opened by a run that died before recording it is found, not
// opened twice.
func TestFlowCrashPullRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review = config.ReviewSkip; c.Research = false })
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	h.advance(n)
	h.advance(n)
	crashAt(t, h, "after-pr", 1, func() { h.advance(n) })
	h.eng.Checkpoint = nil
	res := h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("rerun Result = %+v", res)
	}
	if got := h.gh.count("CreatePull"); got != 1 {
		t.Errorf("CreatePull calls: %d", got)
	}
}
