package engine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The security review (security_review: true): after the self-review, before the pull request.

const securityPath = "thoughts/shared/reviews/" + day + "-GH-0001-parse-widgets-security-review.md"

// secured is a harness with self_review and security_review on whose issue is In Progress with both
// phases of the default plan done.
func secured(t *testing.T, maxIterations int) (*harness, int) {
	t.Helper()
	h := newHarness(t, func(c *config.Config) {
		c.Review, c.Research, c.SelfReview, c.SecurityReview, c.MaxIterations = config.ReviewSkip, false, true, true, maxIterations
	})
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	h.advance(n)
	h.advance(n)
	return h, n
}

// TestFlowSecurityReviewPasses: PASS leaves the issue In Progress with the review committed, posted and
// recorded; the next run opens the pull request, which links it.
func TestFlowSecurityReviewPasses(t *testing.T) {
	t.Parallel()
	h, n := secured(t, 3)
	h.agent.set("security-review", writes("# Security review\n\nNo input reaches a shell.\n\nVERDICT: PASS\n"))
	if res := h.advance(n); res.Step != selfReviewEvent {
		t.Fatalf("first: Result = %+v, want the self-review", res)
	}
	res := h.advance(n)
	if res.Step != steps.SecurityReview || res.State != workflow.InProgress || !res.Continue || res.PRURL != "" {
		t.Errorf("security review Result = %+v", res)
	}
	inv := h.agent.last()
	if inv.Command != "security-review" || !strings.HasSuffix(inv.Artifact, securityPath) || !strings.Contains(inv.Prompt, "phase1.txt") || !strings.Contains(inv.Prompt, "VERDICT: FINDINGS") {
		t.Errorf("security review invocation: command %q, artifact %q, prompt:\n%s", inv.Command, inv.Artifact, inv.Prompt)
	}
	if got, ok := h.show(branchOf(n, "parse-widgets"), securityPath); !ok || !strings.Contains(got, "VERDICT: PASS") {
		t.Errorf("the security review on the branch = %q, %v", got, ok)
	}
	if got := len(h.gh.commentsStarting(n, "## Security Review")); got != 1 {
		t.Errorf("security review comments = %d, want 1", got)
	}
	if a := h.gh.record(t, n).Artifacts["security-review"]; a.Verdict != "PASS" || a.Path != securityPath {
		t.Errorf("security review artifact = %+v", a)
	}
	if status := h.gh.statusBody(n); !strings.Contains(status, "- [x] Security review\n") {
		t.Errorf("the status comment does not check the security review off:\n%s", status)
	}

	res = h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview || res.PRURL == "" {
		t.Errorf("pr Result = %+v", res)
	}
	if pr := h.gh.pull(h.gh.record(t, n).PR); pr == nil || !strings.Contains(pr.Body, securityPath) {
		t.Errorf("the pull request %+v does not link the security review", pr)
	}
	if diff := cmp.Diff([]string{"plan", "implement", "implement", "self-review", "security-review"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
}

// TestFlowSecurityReviewFindings: FINDINGS adds a fix phase that reads the review and stays In Progress;
// the phase is implemented, the review runs again and passes, then the pull request opens. At
// max_iterations, findings go to a person instead.
func TestFlowSecurityReviewFindings(t *testing.T) {
	t.Parallel()
	h, n := secured(t, 3)
	h.agent.set("security-review", writes("# Security review\n\nparse.go builds a shell command from the title.\n\nVERDICT: FINDINGS\n"), writes("VERDICT: PASS\n"))
	h.advance(n) // the self-review
	res := h.advance(n)
	if res.Step != steps.SecurityReview || res.State != workflow.InProgress || !res.Continue {
		t.Errorf("security review Result = %+v", res)
	}
	rec := h.gh.record(t, n)
	if len(rec.Phases) != 3 || !rec.Phases[2].Fix || rec.Phases[2].Title != "Address security review 1" || rec.ReviewIterations != 1 || rec.Artifacts["security-review"].Verdict != "FINDINGS" {
		t.Fatalf("phases %+v, review iterations %d, artifact %+v", rec.Phases, rec.ReviewIterations, rec.Artifacts["security-review"])
	}
	res = h.advance(n)
	if inv := h.agent.last(); res.Step != workflow.Implement || inv.Phase != 3 || !strings.Contains(inv.Prompt, "builds a shell command from the title") {
		t.Errorf("fix phase: Result = %+v, phase %d", res, inv.Phase)
	}
	if res := h.advance(n); res.Step != steps.SecurityReview || res.State != workflow.InProgress {
		t.Errorf("second security review: Result = %+v", res)
	}
	if res := h.advance(n); res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("pr: Result = %+v", res)
	}
	if got := h.gh.count("CreatePull"); got != 1 {
		t.Errorf("CreatePull calls = %d, want 1", got)
	}

	h, n = secured(t, 1)
	h.agent.set("security-review", writes("VERDICT: FINDINGS\n"))
	h.advance(n) // the self-review
	res = h.advance(n)
	if res.Step != steps.SecurityReview || res.State != workflow.HumanNeeded || !res.Paused {
		t.Errorf("at max_iterations: Result = %+v", res)
	}
	h.wantState(n, workflow.HumanNeeded)
	if rec := h.gh.record(t, n); rec.Before != workflow.InProgress || !strings.Contains(rec.Reason, "security review found problems") {
		t.Errorf("record: before %s, reason %q", rec.Before, rec.Reason)
	}
	if h.gh.count("CreatePull") != 0 {
		t.Errorf("a pull request was opened")
	}
}

// TestFlowSecurityReviewOffByDefault: with the default config the step never runs and the status comment
// does not list it: the pull request follows the self-review.
func TestFlowSecurityReviewOffByDefault(t *testing.T) {
	t.Parallel()
	if config.Default().SecurityReview {
		t.Fatal("security_review is on by default")
	}
	h, n := phasesDone(t, 3)
	h.advance(n) // the self-review
	if res := h.advance(n); res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("after the self-review: Result = %+v, want the pull request", res)
	}
	if strings.Contains(h.gh.statusBody(n), "Security review") {
		t.Errorf("the status comment lists the security review:\n%s", h.gh.statusBody(n))
	}
	if diff := cmp.Diff([]string{"plan", "implement", "implement", "self-review"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
}
