package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestMissingIssueAndPullRequest: a dispatch for an issue that does not exist, or for a pull request, fails
// with an error that says so and writes nothing.
func TestMissingIssueAndPullRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\nself_review: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.chain(5)
	pr := e.srv.Pulls()[0].Number
	for _, tt := range []struct {
		issue, want string
	}{
		{"99", "issue #99 does not exist in this repository"},
		{"#" + itoa(pr), "is a pull request; ralph works on issues"},
		{"abc", `"abc" is not an issue number`},
	} {
		before := len(e.srv.Requests())
		r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": tt.issue}), nil)
		if r.exit != 1 || !strings.Contains(r.stdout, "::error::") || !strings.Contains(r.stdout, tt.want) {
			t.Errorf("issue %s: exit %d, want 1 and an error saying %q:\n%s", tt.issue, r.exit, tt.want, r.stdout)
		}
		for _, req := range e.srv.Requests()[before:] {
			if req.Write() {
				t.Errorf("issue %s: wrote %s %s", tt.issue, req.Method, req.Path)
			}
		}
	}
}

// TestTwoStateLabels: labels the status comment settles are repaired; labels it cannot settle send the
// issue to a person.
func TestTwoStateLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.wantState(n, workflow.PlanInReview)
	// Someone adds a second state label by hand; the status comment records Plan in Review.
	e.srv.AddLabel(n, workflow.Done.Label(), maintainer)
	r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	e.wantState(n, workflow.PlanInReview)

	// An issue with two state labels and no status comment: nothing says which is right.
	m := e.srv.CreateIssue("octocat", "Confused", "")
	e.srv.AddLabel(m, workflow.LabelBuild, maintainer)
	e.srv.AddLabel(m, workflow.ReadyForPlan.Label(), maintainer)
	e.srv.AddLabel(m, workflow.InProgress.Label(), maintainer)
	r = e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(m)}), nil)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	e.wantState(m, workflow.HumanNeeded)
	if e.commentsStarting(m, "### ralph needs a person") != 1 {
		t.Errorf("no comment explains the Human Needed")
	}
	if len(e.invocations()) != 1 { // only #1's plan
		t.Errorf("the agent ran on a confused issue: %v", e.invocations())
	}
}

// TestPlanWithoutPhasesAndReviewWithoutVerdict: a document that lacks what it must have fails its step
// with a message that says what is missing; the issue stays where it was.
func TestPlanWithoutPhasesAndReviewWithoutVerdict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nmax_failures: 3\n"))
	e.setControl("plan_without_phases", "")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 1 {
		t.Errorf("a plan without phases: exit %d, want 1", r.exit)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if e.commentsStarting(n, "### ralph: plan failed (1 of 3)") != 1 || e.commentsStarting(n, "## Implementation Plan") != 0 {
		t.Errorf("comments: %+v", e.srv.Comments(n))
	}
	if !strings.Contains(e.statusComment(n), "the plan has no `## Phase N: ＜title>` headings") { // quoted inert: no tag
		t.Errorf("the status comment does not say what is missing")
	}
	if e.branchExists(branch) {
		if subjects, _ := e.branch(branch); len(matching(subjects, "plan for")) != 0 {
			t.Errorf("a plan without phases was committed")
		}
	}

	// The next plan has phases; its review has no verdict.
	if err := removeControl(e, "plan_without_phases"); err != nil {
		t.Fatal(err)
	}
	e.setControl("verdict", "NONE")
	plan, _ := e.next()
	review, _ := e.next()
	if plan.outputs["step"] != "plan" || review.outputs["step"] != "review" || review.exit != 1 {
		t.Fatalf("runs: plan %v, review %v (exit %d)", plan.outputs, review.outputs, review.exit)
	}
	e.wantState(n, workflow.PlanInReview)
	if e.commentsStarting(n, "### ralph: review failed (1 of 3)") != 1 {
		t.Errorf("no review failure comment")
	}
	found := false
	for _, c := range e.srv.Comments(n) {
		found = found || strings.Contains(c.Body, "has no `VERDICT: APPROVED` or `VERDICT: NEEDS_ITERATION` line")
	}
	if !found {
		t.Errorf("the failure does not say the verdict is missing")
	}
	if slices.Contains(e.srv.Labels(n), workflow.LabelNeedsIteration) {
		t.Errorf("a review without verdict sent the plan back")
	}
}
