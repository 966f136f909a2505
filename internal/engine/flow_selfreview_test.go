package engine_test

// Self-review is a step of its own ("self-review"), run in its own Advance before the pr step opens the
// pull request. These tests describe that behaviour; the engine before the reshape did both in the pr
// step, so they fail there.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

const selfReviewEvent = workflow.Event("self-review")

// phasesDone is a harness with self_review on (max_iterations as given) whose issue is In Progress with
// both phases of the default plan done.
func phasesDone(t *testing.T, maxIterations int) (*harness, int) {
	t.Helper()
	h := newHarness(t, func(c *config.Config) {
		c.Review, c.Research, c.SelfReview, c.MaxIterations = config.ReviewSkip, false, true, maxIterations
	})
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	h.advance(n)
	if res := h.advance(n); res.Message != "phase 2 of 2 done" {
		t.Fatalf("phase 2: Result = %+v", res)
	}
	return h, n
}

const selfReviewPath = "thoughts/shared/reviews/" + day + "-GH-0001-parse-widgets-self-review.md"

// TestFlowSelfReviewApproved: the self-review runs in its own Advance and leaves the issue In Progress;
// the next Advance opens the pull request without running the agent again.
func TestFlowSelfReviewApproved(t *testing.T) {
	t.Parallel()
	h, n := phasesDone(t, 3)
	branch := branchOf(n, "parse-widgets")
	res := h.advance(n)
	if res.Step != selfReviewEvent || res.From != workflow.InProgress || res.State != workflow.InProgress || !res.Continue || res.Paused || res.PRURL != "" {
		t.Errorf("self-review Result = %+v", res)
	}
	inv := h.agent.last()
	if inv.Command != "self-review" || inv.Artifact != filepath.Join(inv.Dir, selfReviewPath) {
		t.Errorf("self-review invocation: command %q, artifact %q", inv.Command, inv.Artifact)
	}
	if !strings.Contains(inv.Prompt, "phase1.txt") {
		t.Errorf("the self-review's prompt does not hold the branch's diff:\n%s", inv.Prompt)
	}
	if got, ok := h.show(branch, selfReviewPath); !ok || !strings.Contains(got, "VERDICT: APPROVED") {
		t.Errorf("self-review on the branch = %q, %v", got, ok)
	}
	if cs := h.gh.commentsStarting(n, "## Self-Review"); len(cs) != 1 {
		t.Errorf("self-review comments: %d", len(cs))
	}
	if got := h.gh.count("CreatePull"); got != 0 {
		t.Errorf("the self-review's run opened a pull request (%d CreatePull calls)", got)
	}
	h.wantState(n, workflow.InProgress)
	rec := h.gh.record(t, n)
	if a := rec.Artifacts["self-review"]; a.Verdict != "APPROVED" || a.Path != selfReviewPath {
		t.Errorf("self-review artifact = %+v", a)
	}

	res = h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview || !res.Paused || res.PRURL == "" {
		t.Errorf("pr Result = %+v", res)
	}
	if diff := cmp.Diff([]string{"plan", "implement", "implement", "self-review"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
	rec = h.gh.record(t, n)
	if pr := h.gh.pull(rec.PR); pr == nil || !strings.Contains(pr.Body, selfReviewPath) {
		t.Errorf("pull request %+v does not link the self-review", pr)
	}
	if !strings.Contains(h.gh.statusBody(n), "- [x] Self-review") {
		t.Errorf("status comment:\n%s", h.gh.statusBody(n))
	}
}

// TestFlowSelfReviewSendsBack: NEEDS_ITERATION adds a fix phase with the critique and stays In Progress;
// the fix phase is implemented, the next self-review approves, then the pull request opens.
func TestFlowSelfReviewSendsBack(t *testing.T) {
	t.Parallel()
	h, n := phasesDone(t, 3)
	h.agent.set("self-review", writes("# Self-review\n\nparse.go leaks a file.\n\nVERDICT: NEEDS_ITERATION\n"), writes(approved))
	res := h.advance(n)
	if res.Step != selfReviewEvent || res.State != workflow.InProgress || !res.Continue {
		t.Errorf("self-review Result = %+v", res)
	}
	rec := h.gh.record(t, n)
	if len(rec.Phases) != 3 || !rec.Phases[2].Fix || rec.Phases[2].Title != "Address self-review 1" || rec.Phases[2].SHA != "" || rec.ReviewIterations != 1 {
		t.Fatalf("phases %+v, review iterations %d", rec.Phases, rec.ReviewIterations)
	}
	if got := h.gh.count("CreatePull"); got != 0 {
		t.Errorf("a pull request was opened after NEEDS_ITERATION")
	}

	res = h.advance(n)
	inv := h.agent.last()
	if res.Step != workflow.Implement || inv.Phase != 3 || inv.Phases != 3 || !strings.Contains(inv.Prompt, "parse.go leaks a file.") {
		t.Errorf("fix phase: Result = %+v, phase %d of %d", res, inv.Phase, inv.Phases)
	}
	if res := h.advance(n); res.Step != selfReviewEvent || res.State != workflow.InProgress {
		t.Errorf("second self-review: Result = %+v", res)
	}
	if res := h.advance(n); res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("pr: Result = %+v", res)
	}
	if got := len(h.gh.commentsStarting(n, "## Self-Review")); got != 2 {
		t.Errorf("self-review comments: %d, want one per round", got)
	}
}

// TestFlowSelfReviewMaxIterations: sent back max_iterations times, the change goes to a person.
func TestFlowSelfReviewMaxIterations(t *testing.T) {
	t.Parallel()
	h, n := phasesDone(t, 1)
	h.agent.set("self-review", writes("VERDICT: NEEDS_ITERATION\n"))
	res := h.advance(n)
	if res.Step != selfReviewEvent || res.State != workflow.HumanNeeded || !res.Paused || res.Continue {
		t.Errorf("Result = %+v", res)
	}
	h.wantState(n, workflow.HumanNeeded)
	rec := h.gh.record(t, n)
	if rec.Before != workflow.InProgress || rec.Reason != "The self-review sent the change back 1 times (max_iterations: 1)." {
		t.Errorf("record: before %s, reason %q", rec.Before, rec.Reason)
	}
	if h.gh.count("CreatePull") != 0 {
		t.Errorf("a pull request was opened")
	}
}

// TestFlowSelfReviewFails: a self-review without a verdict is a failed self-review step.
func TestFlowSelfReviewFails(t *testing.T) {
	t.Parallel()
	h, n := phasesDone(t, 3)
	h.agent.set("self-review", writes("Looks fine, I think.\n"))
	res, err := h.eng.Advance(context.Background(), n)
	se := stepError(err)
	if se == nil || se.Step != "self-review" || res.Step != selfReviewEvent || res.State != workflow.InProgress {
		t.Errorf("Advance = %+v, %v", res, err)
	}
	if rec := h.gh.record(t, n); rec.FailedStep != selfReviewEvent || rec.Failures != 1 {
		t.Errorf("record: failed %q × %d", rec.FailedStep, rec.Failures)
	}
	if cs := h.gh.commentsStarting(n, "### ralph: self-review failed (1 of 2)"); len(cs) != 1 {
		t.Errorf("failure comments: %q", cs)
	}
}

// TestFlowSelfReviewOff: with self_review off the pr step opens the pull request directly.
func TestFlowSelfReviewOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review, c.Research, c.SelfReview = config.ReviewSkip, false, false })
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	h.advance(n)
	h.advance(n)
	res := h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("Result = %+v", res)
	}
	if strings.Contains(strings.Join(h.agent.commands(), ","), "self-review") {
		t.Errorf("the self-review ran with self_review off: %v", h.agent.commands())
	}
	if _, ok := h.gh.record(t, n).Artifacts["self-review"]; ok {
		t.Errorf("a self-review artifact was recorded")
	}
}
