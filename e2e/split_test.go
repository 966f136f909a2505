package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestSplitIntoSubIssues: triage splits an issue; ralph creates, links and enrolls the parts, works on them
// in dependency order, and the parent follows them: In Review when all are In Review or Done, Done when all
// are Done.
func TestSplitIntoSubIssues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "triage: true\nresearch: false\nreview: skip\nself_review: false\n"))
	e.setControl("phases", "1")
	e.setControl("triage-1", `Too big for one pull request.

DECISION: split

## Sub-issue: Add the parser

Parse the new syntax.

## Sub-issue: Use the parser

Wire it into the command.

Blocked by: 1
`)
	parent := e.srv.CreateIssue("octocat", "Big feature", "Do all of it.")
	r := e.label(parent, maintainer)
	if r.exit != 0 || r.outputs["step"] != "triage" {
		t.Fatalf("triage run: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.wantState(parent, workflow.InProgress)
	kids := e.srv.SubIssues(parent)
	if len(kids) != 2 {
		t.Fatalf("sub-issues = %v, want 2", kids)
	}
	first, second := kids[0], kids[1]
	if got := e.srv.BlockedBy(second); !slices.Equal(got, []int{first}) {
		t.Errorf("#%d is blocked by %v, want [%d]", second, got, first)
	}
	for i, k := range kids {
		is := e.srv.Issue(k)
		if want := []string{"Add the parser", "Use the parser"}[i]; is.Title != want || !slices.Contains(is.Labels, workflow.LabelBuild) {
			t.Errorf("sub-issue #%d: %q labels %v", k, is.Title, is.Labels)
		}
	}
	status := e.statusComment(parent)
	for _, want := range []string{"### Sub-issues", "#2 — not started", "#3 — not started (after #2)"} {
		if !strings.Contains(status, want) {
			t.Errorf("parent status lacks %q:\n%s", want, status)
		}
	}
	// Only the unblocked part was started.
	if ds := e.srv.Dispatches(); len(ds) != 1 || ds[0].Inputs["issue"] != "2" {
		t.Fatalf("dispatches after the split = %+v, want one for #2", ds)
	}

	e.chain(20)
	if got := e.srv.SubIssues(parent); !slices.Equal(got, kids) {
		t.Errorf("sub-issues after the chain = %v", got)
	}
	e.wantState(first, workflow.InReview)
	if got := e.srv.Labels(second); slices.ContainsFunc(got, isStateLabel) {
		t.Errorf("the blocked part #%d started: %v", second, got)
	}
	e.wantState(parent, workflow.InProgress)
	if !strings.Contains(e.statusComment(parent), "#2 — In Review") {
		t.Errorf("the parent does not show its part In Review:\n%s", e.statusComment(parent))
	}

	// The first part's pull request is merged: it is Done, the second part starts.
	merge := func(n int) {
		t.Helper()
		for _, p := range e.srv.Pulls() {
			if p.Head == branchOf(e, n) {
				e.srv.MergePull(p.Number)
				for _, q := range e.srv.Pulls() {
					if q.Number == p.Number {
						if r := e.run("pull_request", pullClosedEvent(t, q), nil); r.exit != 0 {
							t.Fatalf("merge run for #%d: exit %d\n%s", n, r.exit, r.stdout)
						}
					}
				}
				return
			}
		}
		t.Fatalf("no pull request for #%d", n)
	}
	merge(first)
	e.chain(20)
	e.wantState(first, workflow.Done)
	e.wantState(second, workflow.InReview)
	e.wantState(parent, workflow.InReview)

	merge(second)
	e.chain(20)
	e.wantState(second, workflow.Done)
	e.wantState(parent, workflow.Done)
	if inv := e.invocations(); slices.Contains(inv, "implement 1 1 1") {
		t.Errorf("the parent itself was implemented: %v", inv)
	}
	if got := len(e.srv.Pulls()); got != 2 {
		t.Errorf("%d pull requests, want one per part", got)
	}
}

// branchOf is the branch ralph works on for issue n (from its status comment's record).
func branchOf(e *env, n int) string {
	e.t.Helper()
	body := e.statusComment(n)
	i := strings.Index(body, `"branch": "`)
	if i < 0 {
		e.t.Fatalf("#%d's record names no branch", n)
	}
	rest := body[i+len(`"branch": "`):]
	return rest[:strings.Index(rest, `"`)]
}

// TestSplitCrashRerun: a triage run that dies after creating the first sub-issue (before linking it) is
// repaired by the next run: the parts exist once each, linked, with their dependency.
func TestSplitCrashRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "triage: true\nresearch: false\n"))
	e.setControl("triage-1", "DECISION: split\n\n## Sub-issue: One\n\nfirst\n\n## Sub-issue: Two\n\nBlocked by: 1\n")
	parent := e.srv.CreateIssue("octocat", "Big feature", "")
	e.srv.AddLabel(parent, workflow.LabelBuild, maintainer)
	p := e.start("issues", labeledEvent(t, parent, workflow.LabelBuild, maintainer), nil,
		runOpts{runID: 7001, env: map[string]string{"RALPH_TEST_CRASH_AT": "after-sub-issue"}})
	if r := p.wait(); r.exit == 0 {
		t.Fatalf("the run did not stop at the checkpoint:\n%s", r.stdout)
	}
	if got := len(e.srv.SubIssues(parent)); got != 0 {
		t.Fatalf("%d sub-issues linked before the crash, want 0", got)
	}
	e.srv.SetWorkflowRun(7001, "completed", "cancelled")
	r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil)
	if r.exit != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	kids := e.srv.SubIssues(parent)
	if len(kids) != 2 {
		t.Fatalf("sub-issues after the rerun = %v, want 2", kids)
	}
	if got := e.srv.BlockedBy(kids[1]); !slices.Equal(got, []int{kids[0]}) {
		t.Errorf("#%d blocked by %v, want [%d]", kids[1], got, kids[0])
	}
	created := 0
	for _, req := range e.srv.Requests() {
		if req.Method == "POST" && req.Path == "/repos/octo/demo/issues" && req.Status == 201 {
			created++
		}
	}
	if created != 2 {
		t.Errorf("%d issues created, want 2 (one per part, none twice)", created)
	}
	e.wantState(parent, workflow.InProgress)
}

// TestSweepOrderBlockedAndLocked: a sweep takes priority labels first, then age; it skips issues blocked by
// an open issue and issues a live run holds, and says why.
func TestSweepOrderBlockedAndLocked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nsweep:\n  max: 3\n"))
	plain := e.srv.CreateIssue("octocat", "Old, no priority", "")
	low := e.srv.CreateIssue("octocat", "Low", "")
	high := e.srv.CreateIssue("octocat", "High", "")
	blocked := e.srv.CreateIssue("octocat", "Blocked", "")
	blocker := e.srv.CreateIssue("octocat", "Blocker (not enrolled)", "")
	held := e.srv.CreateIssue("octocat", "Held", "")
	newest := e.srv.CreateIssue("octocat", "Newest, no priority", "")
	for _, n := range []int{plain, low, high, blocked, held, newest} {
		e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	}
	e.srv.AddLabel(low, "priority:low", maintainer)
	e.srv.AddLabel(high, "priority: high", maintainer)
	e.srv.AddLabel(blocked, "priority:critical", maintainer)
	e.srv.AddBlockedBy(blocked, blocker)
	e.srv.AddLabel(held, "priority:critical", maintainer)
	// A live run holds #held: its lock names Actions run 4242, still in progress.
	e.srv.SetWorkflowRun(4242, "in_progress", "")
	msg := `ralph lock for #` + itoa(held) + "\n\n" + `{"kind":"actions","run_id":4242,"attempt":1,"since":"2026-01-01T00:00:00Z","expires":"2999-01-01T00:00:00Z"}`
	sha := e.git(e.srv.BareRepo, "-c", "user.name=ralph", "-c", "user.email=ralph@example.com", "commit-tree", "-m", msg, "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	e.git(e.srv.BareRepo, "update-ref", "refs/ralph/locks/"+itoa(held), sha)

	r := e.run("schedule", map[string]any{"schedule": "17 * * * *"}, map[string]string{"dry_run": "true"})
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	want := "[" + itoa(high) + "," + itoa(low) + "," + itoa(plain) + "]"
	if r.outputs["issues"] != want {
		t.Errorf("issues = %s, want %s (high, low, then the oldest without priority)", r.outputs["issues"], want)
	}
	for _, why := range []string{"skipping #" + itoa(blocked) + ": blocked by #" + itoa(blocker), "skipping #" + itoa(held) + ": held by Actions run 4242"} {
		if !strings.Contains(r.stdout, why) {
			t.Errorf("the sweep does not say %q:\n%s", why, r.stdout)
		}
	}
	// Once the blocker is closed and the holder's run has completed, both are picked, by priority.
	e.srv.CloseIssue(blocker)
	e.srv.SetWorkflowRun(4242, "completed", "cancelled")
	r = e.run("schedule", map[string]any{"schedule": "17 * * * *"}, map[string]string{"dry_run": "true"})
	if want := "[" + itoa(blocked) + "," + itoa(held) + "," + itoa(high) + "]"; r.outputs["issues"] != want {
		t.Errorf("issues = %s, want %s", r.outputs["issues"], want)
	}
}
