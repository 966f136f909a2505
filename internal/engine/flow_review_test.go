package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowReviewSendBack: a review that sends the plan back returns it to Ready for Plan with
// ralph:needs-iteration, and the next plan gets the critique; max_iterations send-backs go to a person,
// and a person's retry lets ralph plan again.
func TestFlowReviewSendBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.MaxIterations = 2 })
	h.agent.on("review", writes(sentBack))
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.PlanInReview, 2)

	res := h.advance(n)
	if res.Step != workflow.Review || res.State != workflow.ReadyForPlan || !res.Continue {
		t.Errorf("send-back Result = %+v", res)
	}
	h.wantState(n, workflow.ReadyForPlan)
	if !slices.Contains(h.gh.labels(n), workflow.LabelNeedsIteration) {
		t.Errorf("labels = %v, want %s", h.gh.labels(n), workflow.LabelNeedsIteration)
	}
	rec := h.gh.record(t, n)
	if rec.PlanIterations != 1 || !strings.HasPrefix(rec.Feedback, "the plan review: "+h.gh.web()) || rec.Artifacts["review"].Verdict != "NEEDS_ITERATION" {
		t.Errorf("record: iterations %d, feedback %q, review %+v", rec.PlanIterations, rec.Feedback, rec.Artifacts["review"])
	}
	if !strings.Contains(h.gh.statusBody(n), "Plan (sent back 1 of 2 times)") {
		t.Errorf("status comment:\n%s", h.gh.statusBody(n))
	}

	// The second plan gets the critique and the plan it replaces, and drops the label.
	res = h.advance(n)
	if res.Step != workflow.Plan || res.State != workflow.PlanInReview {
		t.Errorf("re-plan Result = %+v", res)
	}
	if p := h.agent.last().Prompt; !strings.Contains(p, rec.Feedback) || !strings.Contains(p, "## Phase 2: Wire it up") {
		t.Errorf("the second plan's prompt lacks the feedback or the earlier plan:\n%s", p)
	}
	if slices.Contains(h.gh.labels(n), workflow.LabelNeedsIteration) {
		t.Errorf("labels = %v, want no %s", h.gh.labels(n), workflow.LabelNeedsIteration)
	}

	// Sent back a second time: a person is needed.
	res = h.advance(n)
	if res.State != workflow.HumanNeeded || !res.Paused || res.Continue {
		t.Errorf("second send-back Result = %+v", res)
	}
	h.wantState(n, workflow.HumanNeeded)
	rec = h.gh.record(t, n)
	if rec.Before != workflow.ReadyForPlan || rec.Reason != "The plan review sent the plan back 2 times (max_iterations: 2)." {
		t.Errorf("record: before %s, reason %q", rec.Before, rec.Reason)
	}
	if got := h.gh.commentsStarting(n, "### ralph needs a person"); len(got) != 1 {
		t.Errorf("notices = %q", got)
	}
	// Each review round is its own commit and its own comment.
	if got := len(h.gh.commentsStarting(n, "## Plan Review")); got != 2 {
		t.Errorf("review comments: %d, want 2", got)
	}
	wantCommits := []string{
		"ralph: research for #1 Parse widgets", "ralph: plan for #1 Parse widgets", "ralph: plan review for #1 Parse widgets",
		"ralph: plan for #1 Parse widgets", "ralph: plan review for #1 Parse widgets",
	}
	if diff := cmp.Diff(wantCommits, h.subjects(branchOf(n, "parse-widgets"))); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	body := h.gh.statusBody(n)
	for _, s := range []string{"## ralph: Human Needed", "> **A person is needed.** The plan review sent the plan back 2 times", "`/ralph retry`"} {
		if !strings.Contains(body, s) {
			t.Errorf("status comment lacks %q:\n%s", s, body)
		}
	}
	res = h.advance(n)
	if res.Step != "" || !res.Paused || !strings.Contains(res.Message, "needs a person") {
		t.Errorf("Human Needed Result = %+v", res)
	}

	// A person retries: back to Ready for Plan, with the count of iterations cleared.
	res, err := h.eng.Retry(context.Background(), n, "alice")
	if err != nil || res.Step != workflow.Event(engine.ActRetry) || res.From != workflow.HumanNeeded || res.State != workflow.ReadyForPlan || !res.Continue {
		t.Errorf("Retry = %+v, %v", res, err)
	}
	rec = h.gh.record(t, n)
	if rec.PlanIterations != 0 || rec.Reason != "" {
		t.Errorf("after retry: iterations %d, reason %q", rec.PlanIterations, rec.Reason)
	}
	h.wantState(n, workflow.ReadyForPlan)
}

// TestFlowReviewSkip: review: skip approves at once, with no agent.
func TestFlowReviewSkip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review = config.ReviewSkip; c.Research = false })
	n := h.enrolled("Parse widgets")
	h.advance(n)
	res := h.advance(n)
	if res.Step != workflow.Review || res.State != workflow.InProgress {
		t.Errorf("Result = %+v", res)
	}
	if diff := cmp.Diff([]string{"plan"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
	if v := h.gh.record(t, n).Artifacts["review"].Verdict; v != "APPROVED (review: skip)" {
		t.Errorf("verdict = %q", v)
	}
}

// TestFlowReviewInteractive: review: interactive waits for a person, who approves or rejects; only people
// with write access count.
func TestFlowReviewInteractive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review = config.ReviewInteractive })
	auth := &fakeAuth{allowed: map[string]bool{"alice": true}}
	h.eng.Auth = auth
	n := h.enrolled("Parse widgets")
	h.advance(n)
	res := h.advance(n)
	if res.State != workflow.PlanInReview || !res.Paused || res.Continue {
		t.Errorf("plan Result = %+v", res)
	}
	if !strings.Contains(h.gh.statusBody(n), "`/ralph approve` or `/ralph reject <why>`") {
		t.Errorf("status comment does not say what a person can do:\n%s", h.gh.statusBody(n))
	}
	res = h.advance(n)
	if res.Step != "" || !res.Paused || !strings.Contains(res.Message, "waits for a person to review the plan") {
		t.Errorf("waiting Result = %+v", res)
	}

	// Someone without write access is refused, politely, and nothing moves.
	ctx := context.Background()
	var refused *engine.RefusedError
	if _, err := h.eng.Approve(ctx, n, "mallory"); !errors.As(err, &refused) || refused.Login != "mallory" || refused.Action != engine.ActApprove {
		t.Errorf("Approve by mallory: %v", err)
	}
	if got := h.gh.commentsStarting(n, "Thanks, @mallory!"); len(got) != 1 || !strings.Contains(got[0], "approve") {
		t.Errorf("refusal comments = %q", got)
	}
	h.wantState(n, workflow.PlanInReview)

	// A rejection needs a reason; with one, the plan goes back with it.
	var ie *engine.InputError
	if _, err := h.eng.Reject(ctx, n, "alice", "  "); !errors.As(err, &ie) {
		t.Errorf("Reject without a reason: %v", err)
	}
	res, err := h.eng.Reject(ctx, n, "alice", "Phase 2 is too big")
	if err != nil || res.State != workflow.ReadyForPlan || res.Step != "reject" {
		t.Errorf("Reject = %+v, %v", res, err)
	}
	if !slices.Contains(h.gh.labels(n), workflow.LabelNeedsIteration) {
		t.Errorf("labels after a rejection: %v", h.gh.labels(n))
	}
	if rec := h.gh.record(t, n); rec.Feedback != "@alice rejected the plan: Phase 2 is too big" || rec.Artifacts["review"].Verdict != "NEEDS_ITERATION from @alice" {
		t.Errorf("record after a rejection: feedback %q, review %+v", rec.Feedback, rec.Artifacts["review"])
	}
	if _, err := h.eng.Approve(ctx, n, "alice"); !errors.As(err, &ie) || !strings.Contains(err.Error(), "not Plan in Review") {
		t.Errorf("Approve in Ready for Plan: %v", err)
	}
	h.advance(n)
	if p := h.agent.last().Prompt; !strings.Contains(p, "Phase 2 is too big") {
		t.Errorf("the reason did not reach the plan's prompt:\n%s", p)
	}
	res, err = h.eng.Approve(ctx, n, "alice")
	if err != nil || res.State != workflow.InProgress || !res.Continue || res.Message != "@alice: approve (Plan in Review → In Progress)" {
		t.Errorf("Approve = %+v, %v", res, err)
	}
	h.wantState(n, workflow.InProgress)
	if rec := h.gh.record(t, n); rec.Artifacts["review"].Verdict != "APPROVED by @alice" || rec.Feedback != "" {
		t.Errorf("record after approval: %+v, feedback %q", rec.Artifacts["review"], rec.Feedback)
	}
	if diff := cmp.Diff([]string{"research", "plan", "plan"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
}

// TestFlowParseVerdictAndPhases reads verdicts and phases as the steps do.
func TestFlowParseVerdictAndPhases(t *testing.T) {
	t.Parallel()
	if v, err := engine.ParseVerdict(sentBack); v != "NEEDS_ITERATION" || err != nil {
		t.Errorf("ParseVerdict = %q, %v", v, err)
	}
	ph, err := plantext.ParsePhases(planDoc)
	if err != nil || len(ph) != 2 || ph[1].Title != "Wire it up" || ph[1].Text != "## Phase 2: Wire it up\n\nWrite wire.go." {
		t.Errorf("ParsePhases = %+v, %v", ph, err)
	}
}
