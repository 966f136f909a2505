package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// inReview makes a harness whose issue has its pull request open (review skip, no research, self_review off).
func inReview(t *testing.T, mod func(*config.Config)) (*harness, int, engine.Record) {
	t.Helper()
	h := newHarness(t, func(c *config.Config) {
		c.Review, c.Research = config.ReviewSkip, false
		if mod != nil {
			mod(c)
		}
	})
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InReview, 6)
	return h, n, h.gh.record(t, n)
}

// TestFlowMergeClosed: a pull request closed unmerged sends the issue to a person; retry returns it to In
// Progress and the next run opens a new pull request.
func TestFlowMergeClosed(t *testing.T) {
	t.Parallel()
	h, n, rec := inReview(t, func(c *config.Config) { c.DraftPR = true })
	if p := h.gh.pull(rec.PR); p == nil || !p.Draft {
		t.Errorf("draft_pr: pull request %+v", p)
	}
	h.gh.closePull(rec.PR)
	res := h.advance(n)
	if res.Step != workflow.Merge || res.State != workflow.HumanNeeded || !res.Paused {
		t.Errorf("Result = %+v", res)
	}
	got := h.gh.record(t, n)
	if got.Before != workflow.InProgress || !strings.Contains(got.Reason, "closed without being merged") {
		t.Errorf("record: before %s, reason %q", got.Before, got.Reason)
	}
	if cs := h.gh.commentsStarting(n, "### ralph needs a person"); len(cs) != 1 {
		t.Errorf("notices: %q", cs)
	}
	if _, err := h.eng.Retry(context.Background(), n, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := h.gh.record(t, n); got.State != workflow.InProgress || got.PR != 0 {
		t.Errorf("after retry: %s, PR %d", got.State, got.PR)
	}
	res = h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview {
		t.Errorf("Result = %+v", res)
	}
	if got := h.gh.record(t, n); got.PR == rec.PR || got.PR == 0 {
		t.Errorf("new pull request %d (old %d)", got.PR, rec.PR)
	}
}

// TestFlowPullClosed: the merge step for a closed pull request runs only for the pull request ralph opened
// from the issue's branch, and only from In Review.
func TestFlowPullClosed(t *testing.T) {
	t.Parallel()
	h, n, rec := inReview(t, nil)
	ctx := context.Background()
	branch := rec.Branch
	for _, pr := range []engine.ClosedPull{
		{Number: rec.PR, Head: branch, SameRepo: false},
		{Number: rec.PR, Head: "evil", SameRepo: true},
		{Number: rec.PR + 10, Head: branch, SameRepo: true},
	} {
		res, err := h.eng.PullClosed(ctx, n, pr)
		if err != nil || res.Step != "" || res.State != workflow.InReview || !strings.Contains(res.Message, "is not the one ralph opened") {
			t.Errorf("PullClosed(%+v) = %+v, %v", pr, res, err)
		}
	}
	other := h.gh.addIssue("Other", "")
	if res, err := h.eng.PullClosed(ctx, other, engine.ClosedPull{Number: 1, Head: branch, SameRepo: true}); err != nil || !strings.Contains(res.Message, "not enrolled") {
		t.Errorf("PullClosed of an issue not enrolled = %+v, %v", res, err)
	}
	h.gh.mergePull(rec.PR)
	res, err := h.eng.PullClosed(ctx, n, engine.ClosedPull{Number: rec.PR, Head: branch, SameRepo: true})
	if err != nil || res.Step != workflow.Merge || res.State != workflow.Done || res.PRURL != rec.PRURL {
		t.Errorf("PullClosed = %+v, %v", res, err)
	}
	res, err = h.eng.PullClosed(ctx, n, engine.ClosedPull{Number: rec.PR, Head: branch, SameRepo: true})
	if err != nil || !strings.Contains(res.Message, "not In Review") {
		t.Errorf("PullClosed when Done = %+v, %v", res, err)
	}
}

// TestFlowPullRequestRefused: GitHub refusing the pull request (422) fails the pr step, unless the
// refusal is for a pull request ralph's own repeated request opened, which is then used.
func TestFlowPullRequestRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review, c.Research = config.ReviewSkip, false })
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	h.advance(n)
	h.advance(n)
	h.gh.failCall("CreatePull", 0, 422)
	res, err := h.eng.Advance(context.Background(), n)
	if se := stepError(err); se == nil || se.Step != "pr" || se.Reason != "GitHub refused the pull request" {
		t.Errorf("Advance error = %v", err)
	}
	if res.State != workflow.InProgress {
		t.Errorf("Result = %+v", res)
	}
	// The create went through but its answer was a 422 from a retry: the open pull request is used.
	h.gh.failCallAfter("CreatePull", 0, 422)
	res = h.advance(n)
	if res.State != workflow.InReview || res.PRURL == "" || h.gh.pullCount() != 1 {
		t.Errorf("Result = %+v, pulls %d", res, h.gh.pullCount())
	}
}
