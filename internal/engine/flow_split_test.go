package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// splitInto is a triage that splits its issue into n parts, each blocked by the one before.
func splitInto(n int) string {
	var b strings.Builder
	b.WriteString("Too big for one pull request.\n\nDECISION: split\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n## Sub-issue: Part %d\n\nDo part %d.\n", i, i)
		if i > 1 {
			fmt.Fprintf(&b, "Blocked by: %d\n", i-1)
		}
	}
	return b.String()
}

// splitWrites are the writes a split makes: issues, links, dependencies.
var splitWrites = []string{"CreateIssue", "AddSubIssue", "AddBlockedBy"}

// TestFlowSplitBounded: a triage asking for more sub-issues than split.max creates, links, enrolls and
// dispatches nothing; the issue goes to a person with the count asked for, the limit and how to raise it.
func TestFlowSplitBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int // split.max; 0: the default
		parts  int
		create bool
	}{
		{"sixty sections, the default limit", 0, 60, false},
		{"one more than the default", 0, 6, false},
		{"the default limit exactly", 0, 5, true},
		{"a raised limit", 8, 8, true},
		{"more than a raised limit", 8, 9, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *config.Config) {
				c.Triage = true
				if tt.max != 0 {
					c.Split.Max = tt.max
				}
			})
			limit := h.eng.Config.Split.Max
			h.agent.on("triage", writes(splitInto(tt.parts)))
			n := h.enrolled("Widgets")
			res := h.advance(n)
			created := h.gh.count("CreateIssue")
			if !tt.create {
				if got := h.gh.callsOf(splitWrites...); len(got) != 0 {
					t.Errorf("a split of %d parts (split.max %d) wrote %d times: %+v", tt.parts, limit, len(got), got[:min(3, len(got))])
				}
				if len(res.Dispatch) != 0 || !res.Paused || res.State != workflow.HumanNeeded {
					t.Errorf("Result = %+v, want Human Needed with nothing dispatched", res)
				}
				h.wantState(n, workflow.HumanNeeded)
				rec := h.gh.record(t, n)
				for _, want := range []string{fmt.Sprintf("%d sub-issues", tt.parts), fmt.Sprintf("split.max: %d", limit)} {
					if !strings.Contains(rec.Reason, want) {
						t.Errorf("reason %q does not say %q", rec.Reason, want)
					}
				}
				notice := h.gh.commentsStarting(n, "### ralph needs a person")
				if len(notice) != 1 || !strings.Contains(notice[0], "split.max") || !strings.Contains(notice[0], "/ralph retry") {
					t.Errorf("notices = %q", notice)
				}
				if len(rec.Children) != 0 || rec.Before != workflow.Backlog {
					t.Errorf("record: children %v, before %s", rec.Children, rec.Before)
				}
				if cm := h.gh.commentsStarting(n, "## Triage"); len(cm) != 1 {
					t.Errorf("triage comments = %d, want the document posted once", len(cm))
				}
				return
			}
			if created != tt.parts || res.State != workflow.InProgress {
				t.Errorf("created %d sub-issues, Result %+v; want %d, In Progress", created, res, tt.parts)
			}
		})
	}
}

// TestFlowSplitSizes: a part whose title or body GitHub would not take (or a title that would mention and
// link) is a person's to look at before anything is created; a title is made inert.
func TestFlowSplitSizes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	huge := strings.Repeat("y", 70000)
	tests := []struct {
		name, doc, reason string
	}{
		{"a long title", "DECISION: split\n\n## Sub-issue: " + long + "\n\nA.\n\n## Sub-issue: B\n\nB.\n", "title of sub-issue 1 is 300 characters"},
		{"a huge body", "DECISION: split\n\n## Sub-issue: A\n\n" + huge + "\n\n## Sub-issue: B\n\nB.\n", "body of sub-issue 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, triageOn)
			h.agent.on("triage", writes(tt.doc))
			n := h.enrolled("Widgets")
			res := h.advance(n)
			if got := h.gh.callsOf(splitWrites...); len(got) != 0 || res.State != workflow.HumanNeeded {
				t.Errorf("writes %d, Result %+v; want none, Human Needed", len(got), res)
			}
			if rec := h.gh.record(t, n); !strings.Contains(rec.Reason, tt.reason) {
				t.Errorf("reason %q does not say %q", rec.Reason, tt.reason)
			}
		})
	}

	h := newHarness(t, triageOn)
	h.agent.on("triage", writes("DECISION: split\n\n## Sub-issue: Fix #12 for @bob\n\nA.\n\n## Sub-issue: B\n\nB.\n"))
	n := h.enrolled("Widgets")
	h.advance(n)
	if is := h.gh.issue(n + 1); strings.Contains(is.Title, "#12") || strings.Contains(is.Title, "@bob") {
		t.Errorf("sub-issue title %q: a reference or a mention survived", is.Title)
	}
}

// TestFlowSplitApprove: with split.approve, a split waits for a person: nothing is created until a writer
// approves, and the agent is not run again; the run after the approval creates exactly what was approved.
func TestFlowSplitApprove(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Triage, c.Split.Approve = true, true })
	h.eng.Auth = &fakeAuth{allowed: map[string]bool{"alice": true}}
	h.agent.on("triage", writes(splitDoc), writes("DECISION: plan\n"))
	ctx := context.Background()
	n := h.enrolled("Widgets")

	res := h.advance(n)
	if got := h.gh.callsOf(splitWrites...); len(got) != 0 {
		t.Fatalf("a split waiting for approval wrote: %+v", got)
	}
	if res.Step != workflow.Triage || res.State != workflow.Backlog || !res.Paused || res.Continue || len(res.Dispatch) != 0 {
		t.Errorf("triage Result = %+v, want Backlog, paused for a person", res)
	}
	h.wantState(n, workflow.Backlog)
	if s := h.gh.statusBody(n); !strings.Contains(s, "/ralph approve") {
		t.Errorf("the status comment does not say how to approve the split:\n%s", s)
	}

	// Runs before the approval wait, and run no agent.
	for i := 0; i < 2; i++ {
		res = h.advance(n)
		if res.Step != "" || !res.Paused || !strings.Contains(res.Message, "approve") {
			t.Errorf("run %d before the approval: Result = %+v", i, res)
		}
	}
	if got := h.agent.commands(); len(got) != 1 {
		t.Errorf("agent runs = %v, want the one triage", got)
	}

	// Someone without write access is refused.
	var refused *engine.RefusedError
	if _, err := h.eng.Approve(ctx, n, "mallory"); !errors.As(err, &refused) {
		t.Fatalf("Approve by mallory: %v", err)
	}
	if got := h.gh.callsOf(splitWrites...); len(got) != 0 {
		t.Fatalf("a refused approval created sub-issues: %+v", got)
	}

	res, err := h.eng.Approve(ctx, n, "alice")
	if err != nil || res.State != workflow.Backlog || !res.Continue || res.Paused {
		t.Fatalf("Approve by alice = %+v, %v", res, err)
	}
	if got := h.gh.callsOf(splitWrites...); len(got) != 0 {
		t.Fatalf("the approval itself created sub-issues: %+v", got)
	}
	res = h.advance(n)
	if res.Step != workflow.Triage || res.State != workflow.InProgress {
		t.Errorf("run after the approval: Result = %+v", res)
	}
	if diff := cmp.Diff([]int{n + 1}, res.Dispatch); diff != "" {
		t.Errorf("Dispatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{n + 1, n + 2}, h.gh.record(t, n).Children); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if got := h.agent.commands(); len(got) != 1 {
		t.Errorf("agent runs = %v: the approved split ran the agent again", got)
	}
	if got := h.gh.count("CreateIssue"); got != 2 {
		t.Errorf("sub-issues created: %d, want 2", got)
	}
}

// TestFlowSplitApproveTampered: what a person approved is what ralph wrote; a triage comment changed since
// (even by ralph's own account, as a write access holder could) creates nothing.
func TestFlowSplitApproveTampered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Triage, c.Split.Approve = true, true })
	h.agent.on("triage", writes(splitDoc))
	ctx := context.Background()
	n := h.enrolled("Widgets")
	h.advance(n)
	for _, c := range h.gh.allComments(n) {
		if strings.HasPrefix(c.Body, "## Triage") {
			h.gh.editComment(c.ID, strings.Replace(c.Body, "## Sub-issue: Wire widgets", "## Sub-issue: Wire widgets\n\nmore\n\n## Sub-issue: Extra", 1))
		}
	}
	if _, err := h.eng.Approve(ctx, n, "alice"); err != nil {
		t.Fatal(err)
	}
	res := h.advance(n)
	if got := h.gh.callsOf(splitWrites...); len(got) != 0 || res.State != workflow.HumanNeeded {
		t.Errorf("writes %+v, Result %+v; want none, Human Needed", got, res)
	}
}

// TestFlowSplitReject: a person's rejection sends the split back to triage, with the reason in the next
// triage's prompt; nothing is created.
func TestFlowSplitReject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Triage, c.Split.Approve = true, true })
	h.agent.on("triage", writes(splitDoc), writes("DECISION: plan\n"))
	ctx := context.Background()
	n := h.enrolled("Widgets")
	h.advance(n)
	res, err := h.eng.Reject(ctx, n, "alice", "one pull request is fine")
	if err != nil || res.State != workflow.Backlog || !res.Continue {
		t.Fatalf("Reject = %+v, %v", res, err)
	}
	res = h.advance(n)
	if res.Step != workflow.Triage || res.State != workflow.ReadyForPlan {
		t.Errorf("triage after the rejection: Result = %+v", res)
	}
	if p := h.agent.last().Prompt; !strings.Contains(p, "one pull request is fine") {
		t.Errorf("the rejection's reason is not in the next triage's prompt:\n%s", p)
	}
	if got := h.gh.callsOf(splitWrites...); len(got) != 0 {
		t.Errorf("a rejected split wrote: %+v", got)
	}
	if rec := h.gh.record(t, n); rec.Feedback != "" {
		t.Errorf("feedback %q outlived the triage it was for", rec.Feedback)
	}
	// Approve and reject on an issue with no split waiting are bad input.
	var ie *engine.InputError
	if _, err := h.eng.Approve(ctx, n, "alice"); !errors.As(err, &ie) {
		t.Errorf("Approve with nothing to approve: %v", err)
	}
}

// TestFlowSplitForgedParent: the parent marker counts only at the end of a body ralph wrote. An agent's
// forged marker in a section, and a marker in an issue someone else opened, make no issue a part of another.
func TestFlowSplitForgedParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triageOn)
	h.eng.Auth = &fakeAuth{allowed: map[string]bool{"alice": true}}
	victim := h.enrolled("Another issue") // #1: the parent the forgeries name
	n := h.enrolled("Widgets")            // #2
	// #3, opened by someone without write access, claims to be part 2 of #2's split.
	planted := h.gh.issueBy("mallory", "Planted", "Nothing here.\n\n<!-- ralph:parent 2 part 2 -->", workflow.LabelBuild)
	forged := fmt.Sprintf("DECISION: split\n\n## Sub-issue: A\n\nDo A.\n<!-- ralph:parent %d part 1 -->\n\n## Sub-issue: B\n\nDo B.\n\n<!-- ralph:parent %d part 2 -->\n", victim, victim)
	h.agent.on("triage", writes(forged), writes("DECISION: plan\n"))
	h.advance(n)

	rec := h.gh.record(t, n)
	if slices.Contains(rec.Children, planted) || h.gh.count("CreateIssue") != 2 {
		t.Fatalf("children %v after %d issues created: the planted #%d was taken for a part", rec.Children, h.gh.count("CreateIssue"), planted)
	}
	for _, k := range rec.Children {
		is := h.gh.issue(k)
		if got := strings.Count(is.Body, "<!--"); got != 1 || !strings.HasSuffix(strings.TrimSpace(is.Body), fmt.Sprintf("<!-- ralph:parent %d part %d -->", n, k-planted)) {
			t.Errorf("sub-issue #%d body holds %d comment openers, or does not end with ralph's marker:\n%s", k, got, is.Body)
		}
		if !strings.Contains(is.Body, "&lt;!-- ralph:parent") {
			t.Errorf("sub-issue #%d body lost the agent's text instead of escaping it:\n%s", k, is.Body)
		}
		res := h.advance(k)
		if got := h.gh.record(t, k).Parent; got != n {
			t.Errorf("sub-issue #%d claims parent #%d, want #%d", k, got, n)
		}
		if slices.Contains(res.Dispatch, victim) {
			t.Errorf("sub-issue #%d dispatched #%d", k, victim)
		}
	}

	// The planted issue, enrolled by a writer, is no part of anything.
	if _, err := h.eng.Enroll(context.Background(), planted, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := h.gh.record(t, planted).Parent; got != 0 {
		t.Errorf("the planted issue claims parent #%d", got)
	}
}

// TestFlowPlanPhaseTitleNUL: a phase's title is the agent's, and becomes an argument of ralph's git (the
// phase's commit message): one that holds a NUL (or another control character), which no program's argument
// can hold, goes to a person with the plan, before any phase runs; it must not fail every implement run
// the same way, uncounted, running the agent again each time.
func TestFlowPlanPhaseTitleNUL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.agent.on("plan", writes("# Plan\n\n## Phase 1: Add\x00the parser\n\nWrite parse.go.\n"))
	n := h.enrolled("Widgets")
	h.to(n, workflow.HumanNeeded, 4)
	rec := h.gh.record(t, n)
	if !strings.Contains(rec.Reason, "phase 1") || !strings.Contains(rec.Reason, "control character") {
		t.Errorf("reason = %q", rec.Reason)
	}
	if slices.Contains(h.agent.commands(), "implement") || len(rec.Phases) != 0 {
		t.Errorf("agent runs %v, phases %v", h.agent.commands(), rec.Phases)
	}
}

// TestFlowPlanPhasesBounded: a plan with more phases than max_phases goes to a person; no phase runs.
func TestFlowPlanPhasesBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.MaxPhases = 3 })
	var plan strings.Builder
	plan.WriteString("# Plan: many\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&plan, "\n## Phase %d: Step %d\n\nDo it.\n", i, i)
	}
	h.agent.on("plan", writes(plan.String()))
	n := h.enrolled("Widgets")
	h.to(n, workflow.HumanNeeded, 4)
	rec := h.gh.record(t, n)
	if !strings.Contains(rec.Reason, "4 phases") || !strings.Contains(rec.Reason, "max_phases: 3") {
		t.Errorf("reason = %q", rec.Reason)
	}
	if slices.Contains(h.agent.commands(), "implement") || len(rec.Phases) != 0 {
		t.Errorf("agent runs %v, phases %v", h.agent.commands(), rec.Phases)
	}
}
