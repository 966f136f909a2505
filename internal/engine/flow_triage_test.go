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
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func triageOn(c *config.Config) { c.Triage = true }

// TestFlowTriageDecisions: the triage's DECISION line moves the issue from Backlog; the decision is posted as
// a comment and not committed.
func TestFlowTriageDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		decision string
		research bool
		want     workflow.State
		cont     bool
	}{
		{"research", true, workflow.ResearchNeeded, true},
		{"research", false, workflow.ReadyForPlan, true},
		{"plan", true, workflow.ReadyForPlan, true},
		{"done", true, workflow.Done, false},
		{"canceled", true, workflow.Canceled, false},
		{"cancelled", true, workflow.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.decision, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *config.Config) { c.Triage, c.Research = true, tt.research })
			h.agent.on("triage", writes("Thoughts.\n\n**DECISION: "+tt.decision+"**\n"))
			n := h.enrolled("Parse widgets")
			res := h.advance(n)
			if res.Step != workflow.Triage || res.From != workflow.Backlog || res.State != tt.want || res.Continue != tt.cont {
				t.Errorf("Result = %+v, want %s", res, tt.want)
			}
			h.wantState(n, tt.want)
			inv := h.agent.last()
			if inv.Command != "triage" || !strings.HasPrefix(inv.Artifact, inv.TempDir) {
				t.Errorf("triage invocation: command %q, artifact %q (TMPDIR %q)", inv.Command, inv.Artifact, inv.TempDir)
			}
			cm := h.gh.commentsStarting(n, "## Triage")
			if len(cm) != 1 || !strings.Contains(cm[0], "DECISION: "+tt.decision) {
				t.Errorf("triage comments = %q", cm)
			}
			rec := h.gh.record(t, n)
			if a := rec.Artifacts["triage"]; a.Verdict != string(tt.want) || a.Comment == "" {
				t.Errorf("triage artifact = %+v", a)
			}
			if h.branchExists(branchOf(n, "parse-widgets")) {
				t.Errorf("the triage pushed the branch: %v", h.subjects(branchOf(n, "parse-widgets")))
			}
			if !strings.Contains(h.gh.statusBody(n), "- [x] Triage") {
				t.Errorf("status comment does not tick the triage:\n%s", h.gh.statusBody(n))
			}
		})
	}
}

// TestFlowTriageFailures: a triage with no decision, or none written, is a failed step.
func TestFlowTriageFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		do     behaviour
		reason string
	}{
		{"no decision", writes("I am not sure.\n"), "no `DECISION: research|plan|done|canceled` line"},
		{"nothing written", nothing, "did not write its decision"},
		{"a split of one part", writes("DECISION: split\n\n## Sub-issue: Only one\n\nbody\n"), "at least two"},
		{"a split blocked by a later part", writes("DECISION: split\n\n## Sub-issue: A\nBlocked by: 2\n\n## Sub-issue: B\n"), "name an earlier part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, triageOn)
			h.agent.on("triage", tt.do)
			n := h.enrolled("Parse widgets")
			res, err := h.eng.Advance(context.Background(), n)
			var se *engine.StepError
			if !errors.As(err, &se) || se.Step != "triage" || !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("Advance error = %v, want a triage StepError with %q", err, tt.reason)
			}
			if res.State != workflow.Backlog || !res.Continue {
				t.Errorf("Result = %+v", res)
			}
			h.wantState(n, workflow.Backlog)
			if got := h.gh.commentsStarting(n, "### ralph: triage failed (1 of 2)"); len(got) != 1 {
				t.Errorf("failure comments = %+v", h.gh.allComments(n))
			}
		})
	}
}

const splitDoc = `The issue holds two changes.

DECISION: split

## Sub-issue: Parse widgets
Write the parser.

## Sub-issue: Wire widgets
Blocked by: 1
Wire the parser in.

# Notes
not part of the sub-issue
`

// TestFlowTriageSplit: a split creates the sub-issues, links them, records which blocks which, and starts
// the first; the parent then follows its sub-issues to Done.
func TestFlowTriageSplit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triageOn)
	h.agent.on("triage", writes(splitDoc), writes("DECISION: research\n"))
	n := h.enrolled("Widgets")
	res := h.advance(n)
	a, b := n+1, n+2
	if res.Step != workflow.Triage || res.State != workflow.InProgress || res.Continue {
		t.Errorf("split Result = %+v", res)
	}
	if diff := cmp.Diff([]int{a}, res.Dispatch); diff != "" {
		t.Errorf("Dispatch (-want +got):\n%s", diff)
	}
	rec := h.gh.record(t, n)
	if diff := cmp.Diff([]int{a, b}, rec.Children); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]int{"3": {a}}, rec.ChildDeps); diff != "" {
		t.Errorf("child deps (-want +got):\n%s", diff)
	}
	for i, want := range []string{"Parse widgets", "Wire widgets"} {
		k := n + 1 + i
		is := h.hub.srv.Issue(k)
		if is.Title != want || is.Author != ralphAs || !strings.Contains(is.Body, "<!-- ralph:parent 1 part "+string(rune('1'+i))+" -->") || !slices.Contains(is.Labels, workflow.LabelBuild) {
			t.Errorf("sub-issue #%d = %+v", k, is)
		}
		if strings.Contains(is.Body, "Blocked by") || strings.Contains(is.Body, "not part of") {
			t.Errorf("sub-issue #%d body = %q", k, is.Body)
		}
	}
	if diff := cmp.Diff([]int{a, b}, h.hub.srv.SubIssues(n)); diff != "" {
		t.Errorf("sub-issues (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{a}, h.hub.srv.BlockedBy(b)); diff != "" {
		t.Errorf("#%d blocked by (-want +got):\n%s", b, diff)
	}
	// What the split tests count of ralph's requests is what it sent (hub.callsOf).
	if got := h.gh.callsOf(splitWrites...); len(got) != 5 {
		t.Errorf("the split's writes as the hub counts them: %v, want 2 issues, 2 sub-issue links, 1 dependency", got)
	}
	if diff := cmp.Diff([]int(nil), h.hub.srv.BlockedBy(a)); diff != "" {
		t.Errorf("#%d blocked by (-want +got):\n%s", a, diff)
	}
	if !strings.Contains(h.gh.statusBody(n), "### Sub-issues") {
		t.Errorf("status comment has no sub-issues:\n%s", h.gh.statusBody(n))
	}

	// The parent's next run records its children's states; the one after waits.
	res = h.advance(n)
	if res.Step != workflow.Children || res.State != workflow.InProgress || res.Message != "sub-issues: #2 not started, #3 not started" {
		t.Errorf("parent Result = %+v", res)
	}
	res = h.advance(n)
	if res.Step != "" || !strings.Contains(res.Message, "waits for its sub-issues") {
		t.Errorf("parent Result = %+v", res)
	}

	// The blocked part waits; the first part's step dispatches the parent.
	res = h.advance(b)
	if res.Step != "" || !strings.Contains(res.Message, "blocked by #2") {
		t.Errorf("blocked sub-issue Result = %+v", res)
	}
	h.wantState(b, workflow.Backlog)
	res = h.advance(a)
	if res.Step != workflow.Triage || res.State != workflow.ResearchNeeded || !slices.Contains(res.Dispatch, n) {
		t.Errorf("sub-issue Result = %+v", res)
	}
	if rec := h.gh.record(t, a); rec.Parent != n || !strings.Contains(h.gh.statusBody(a), "Part of #1") {
		t.Errorf("sub-issue record parent = %d", rec.Parent)
	}

	// A label moved by someone is not believed: the sub-issue's record counts.
	h.gh.setLabels(b, workflow.LabelBuild, workflow.InReview.Label())
	h.advance(n)
	if got := h.gh.record(t, n).ChildStates; got["3"] != string(workflow.Backlog) {
		t.Errorf("child states = %v: the moved label was believed", got)
	}

	// Both parts closed: the parent is done.
	h.gh.close(a, "completed")
	h.gh.close(b, "not_planned")
	h.gh.setLabels(b, workflow.LabelBuild)
	res = h.advance(n)
	if res.Step != workflow.Children || res.State != workflow.Done {
		t.Errorf("parent Result = %+v", res)
	}
	h.wantState(n, workflow.Done)
}

// TestFlowTriageSplitInReview: a parent whose sub-issues are all In Review (by their records) is In Review.
func TestFlowTriageSplitInReview(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triageOn)
	h.agent.on("triage", writes(splitDoc))
	n := h.enrolled("Widgets")
	h.advance(n)
	for _, k := range []int{n + 1, n + 2} {
		// The sub-issue's own record says In Review, as ralph wrote it.
		rec := record.Record{State: workflow.InReview, Branch: "ralph/x", Parent: n}
		h.gh.comment(k, ralphAs, engine.RenderStatus(k, rec, h.eng.Config, record.Links{}))
		h.gh.setLabels(k, workflow.LabelBuild, workflow.InReview.Label())
	}
	res := h.advance(n)
	if res.Step != workflow.Children || res.State != workflow.InReview || !res.Paused {
		t.Errorf("parent Result = %+v", res)
	}
}

// TestFlowTriageSplitRerun: a split that stopped after creating its first sub-issue creates only the rest.
func TestFlowTriageSplitRerun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triageOn)
	h.agent.on("triage", writes(splitDoc))
	n := h.enrolled("Widgets")
	crashAt(t, h, "after-sub-issue", 1, func() { h.advance(n) })
	h.eng.Checkpoint = nil
	h.advance(n)
	if got := h.gh.count("CreateIssue"); got != 2 {
		t.Errorf("sub-issues created: %d, want 2", got)
	}
	if diff := cmp.Diff([]int{n + 1, n + 2}, h.gh.record(t, n).Children); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if got := h.gh.count("AddSubIssue"); got != 2 {
		t.Errorf("AddSubIssue calls: %d, want 2", got)
	}
}

// TestFlowParseSplit reads the sub-issues of a split.
func TestFlowParseSplit(t *testing.T) {
	t.Parallel()
	got, err := plantext.ParseSplit(splitDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := []plantext.SubIssue{
		{Title: "Parse widgets", Body: "Write the parser."},
		{Title: "Wire widgets", Body: "Wire the parser in.", BlockedBy: []int{1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseSplit (-want +got):\n%s", diff)
	}
}
