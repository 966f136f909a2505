package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowPersonPermissions: enrolling and retrying count only for people with write access; anyone else
// gets one polite comment and nothing runs.
func TestFlowPersonPermissions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	auth := &fakeAuth{allowed: map[string]bool{"alice": true}}
	h.eng.Auth = auth
	ctx := context.Background()
	n := h.enrolled("Parse widgets")

	var refused *engine.RefusedError
	if _, err := h.eng.Enroll(ctx, n, "mallory"); !errors.As(err, &refused) || refused.Action != engine.ActEnroll {
		t.Fatalf("Enroll by mallory: %v", err)
	}
	if got := h.gh.commentsStarting(n, "Thanks, @mallory!"); len(got) != 1 || !strings.Contains(got[0], "enroll") {
		t.Errorf("refusal comments: %q", got)
	}
	if len(h.agent.commands()) != 0 || len(h.gh.commentsStarting(n, record.StatusMarker)) != 0 {
		t.Errorf("a refused enrollment ran: %v", h.agent.commands())
	}
	res, err := h.eng.Enroll(ctx, n, "alice")
	if err != nil || res.Step != workflow.Research {
		t.Fatalf("Enroll by alice = %+v, %v", res, err)
	}

	// Retry: not in Human Needed is bad input; by mallory, refused; by alice, back where it was.
	var ie *engine.InputError
	if _, err := h.eng.Retry(ctx, n, "alice"); !errors.As(err, &ie) || !strings.Contains(err.Error(), "not Human Needed") {
		t.Errorf("Retry in Ready for Plan: %v", err)
	}
	h.agent.set("plan", exits(1, ""))
	for i := 0; i < 2; i++ {
		if _, err := h.eng.Advance(ctx, n); stepError(err) == nil {
			t.Fatalf("plan run %d: %v", i, err)
		}
	}
	h.wantState(n, workflow.HumanNeeded)
	if _, err := h.eng.Retry(ctx, n, "mallory"); !errors.As(err, &refused) || refused.Action != engine.ActRetry {
		t.Errorf("Retry by mallory: %v", err)
	}
	h.wantState(n, workflow.HumanNeeded)
	auth.err = errors.New("GitHub is down")
	if _, err := h.eng.Retry(ctx, n, "alice"); err == nil || !strings.Contains(err.Error(), "GitHub is down") {
		t.Errorf("Retry when the permission cannot be read: %v", err)
	}
	auth.err = nil
	res, err = h.eng.Retry(ctx, n, "alice")
	if err != nil || res.State != workflow.ReadyForPlan || res.Message != "@alice: retry (Human Needed → Ready for Plan)" {
		t.Errorf("Retry by alice = %+v, %v", res, err)
	}
	h.wantState(n, workflow.ReadyForPlan)

	// A person's command on an issue ralph does not know is bad input.
	m := h.gh.addIssue("Other", "")
	if _, err := h.eng.Approve(ctx, m, "alice"); !errors.As(err, &ie) {
		t.Errorf("Approve of an issue not enrolled: %v", err)
	}
	k := h.gh.addIssue("Labelled", "", workflow.PlanInReview.Label())
	if _, err := h.eng.Approve(ctx, k, "alice"); !errors.As(err, &ie) || !strings.Contains(err.Error(), "no record") {
		t.Errorf("Approve of an issue with only a label: %v", err)
	}
}

// TestFlowStatus: Status refreshes the status comment and replies with a link to it.
func TestFlowStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	n := h.enrolled("Parse widgets")
	var ie *engine.InputError
	if _, err := h.eng.Status(ctx, n, true); !errors.As(err, &ie) {
		t.Errorf("Status of an issue not enrolled: %v", err)
	}
	h.advance(n)
	rec, err := h.eng.Status(ctx, n, true)
	if err != nil || rec.State != workflow.ReadyForPlan || rec.Branch != branchOf(n, "parse-widgets") {
		t.Fatalf("Status = %+v, %v", rec, err)
	}
	replies := h.gh.commentsStarting(n, "ralph: #1 is **Ready for Plan**. Details: "+h.gh.web()+"/issues/1#issuecomment-")
	if len(replies) != 1 {
		t.Errorf("replies: %q", replies)
	}
	if _, err := h.eng.Status(ctx, n, false); err != nil {
		t.Fatal(err)
	}
	if got := len(h.gh.commentsStarting(n, "ralph: #1 is")); got != 1 {
		t.Errorf("Status without a reply replied: %d replies", got)
	}
}

// TestFlowStatusUnowned: a status comment refreshed on an issue whose ralph:build was last added by someone
// who may not drive ralph says the issue waits for a writer and what they do, not that ralph goes on by
// itself; once a writer added the label again, it says ralph goes on.
func TestFlowStatusUnowned(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	n := h.enrolled("Parse widgets")
	h.advance(n)
	h.eng.Auth = &fakeAuth{allowed: map[string]bool{"alice": true}}
	h.gh.labelBuildBy(n, "mallory")
	if _, err := h.eng.Status(ctx, n, false); err != nil {
		t.Fatal(err)
	}
	body := h.gh.statusBody(n)
	for _, want := range []string{"ralph waits: `ralph:build` was added by `@mallory`, who may not drive ralph", "`gh ralph enroll 1`"} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment of an issue labeled by mallory lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "on its own") {
		t.Errorf("status comment of an issue no sweep takes says ralph goes on by itself:\n%s", body)
	}
	h.gh.labelBuildBy(n, "alice")
	if _, err := h.eng.Status(ctx, n, false); err != nil {
		t.Fatal(err)
	}
	if body := h.gh.statusBody(n); !strings.Contains(body, "on its own") || strings.Contains(body, "mallory") {
		t.Errorf("status comment once a writer labeled the issue:\n%s", body)
	}
}

// TestFlowOnState: OnState hears of every state change; its error is a warning, never a failure.
func TestFlowOnState(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	var seen []workflow.State
	n := h.enrolled("Parse widgets")
	node := h.gh.nodeID(n)
	h.eng.OnState = func(_ context.Context, gotNode string, got int, to workflow.State) error {
		if gotNode != node || got != n {
			t.Errorf("OnState(%q, %d), want (%q, %d)", gotNode, got, node, n)
		}
		seen = append(seen, to)
		return errors.New("project board unavailable")
	}
	h.advance(n)
	if len(seen) != 2 || seen[0] != workflow.ResearchInProgress || seen[1] != workflow.ReadyForPlan {
		t.Errorf("OnState saw %v", seen)
	}
	if !h.log.has("updating the project board: project board unavailable") {
		t.Errorf("the board's error was not logged: %v", h.log.lines)
	}
}
