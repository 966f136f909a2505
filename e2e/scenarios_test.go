package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestReviewSkip: the review step approves with no agent.
func TestReviewSkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: skip\nresearch: false\nself_review: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 || r.outputs["step"] != "plan" {
		t.Fatalf("label run: exit %d step %q\n%s", r.exit, r.outputs["step"], r.stdout)
	}
	var steps []string
	for _, r := range e.chain(10) {
		if r.exit != 0 {
			t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
		}
		steps = append(steps, r.outputs["step"])
	}
	if want := []string{"review", "implement", "pr"}; !slices.Equal(steps, want) {
		t.Fatalf("steps = %v, want %v", steps, want)
	}
	if got, want := e.invocations(), []string{"plan 1", "implement 1 1 1"}; !slices.Equal(got, want) {
		t.Errorf("invocations = %q, want %q (no review agent, no self-review)", got, want)
	}
	e.wantState(n, workflow.InReview)
	if e.commentsStarting(n, "## Plan Review") != 0 {
		t.Errorf("review: skip posted a review")
	}
	if len(e.srv.Pulls()) != 1 {
		t.Errorf("want one pull request")
	}
}

// TestInteractiveApprove: the plan waits for a person; /ralph approve moves it on in the same run.
func TestInteractiveApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	e.wantState(n, workflow.PlanInReview)
	rs := e.chain(3)
	if len(rs) != 0 {
		t.Fatalf("the plan step dispatched %d runs; interactive review must wait", len(rs))
	}
	// An explicit advance also waits, and says so.
	r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil)
	if r.exit != 0 || r.outputs["paused"] != "true" || r.outputs["step"] != "" {
		t.Fatalf("advance at the gate: exit %d outputs %v", r.exit, r.outputs)
	}
	if !strings.Contains(e.statusComment(n), "/ralph approve") {
		t.Errorf("the status comment does not say how to approve")
	}

	r = e.comment(n, "/ralph approve", maintainer)
	if r.exit != 0 {
		t.Fatalf("approve: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r.outputs["step"] != "implement" {
		t.Errorf("approve run step = %q, want implement (the approval, then the next step)", r.outputs["step"])
	}
	e.chain(5)
	e.wantState(n, workflow.InReview)
	if got, want := e.invocations(), []string{"plan 1", "implement 1 1 1", "self-review 1"}; !slices.Equal(got, want) {
		t.Errorf("invocations = %q, want %q", got, want)
	}
}

// TestInteractiveRejectThenApprove: the reason reaches the next plan's prompt.
func TestInteractiveRejectThenApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.wantState(n, workflow.PlanInReview)

	r := e.comment(n, "/ralph reject the plan forgets the tests", maintainer)
	if r.exit != 0 {
		t.Fatalf("reject: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r.outputs["step"] != "plan" {
		t.Errorf("reject run step = %q, want plan (sent back, then planned again)", r.outputs["step"])
	}
	e.wantState(n, workflow.PlanInReview)
	if slices.Contains(e.srv.Labels(n), workflow.LabelNeedsIteration) {
		t.Errorf("%s still on after the new plan", workflow.LabelNeedsIteration)
	}
	prompt := readControl(t, e, "prompt-2-plan.md")
	if !strings.Contains(prompt, "the plan forgets the tests") {
		t.Errorf("the second plan's prompt lacks the rejection reason:\n%s", prompt)
	}
	if got := e.commentsStarting(n, "## Implementation Plan"); got != 2 {
		t.Errorf("%d plan comments, want 2 (one per iteration)", got)
	}
	if !strings.Contains(e.statusComment(n), "sent back 1 of 3") {
		t.Errorf("the status comment does not count the iteration")
	}

	if r := e.comment(n, "/ralph approve", maintainer); r.exit != 0 {
		t.Fatalf("approve: exit %d\n%s", r.exit, r.stdout)
	}
	e.chain(5)
	e.wantState(n, workflow.InReview)
}

// TestPlanRejectedMaxIterations: the critic sends the plan back max_iterations times: Human Needed.
func TestPlanRejectedMaxIterations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nmax_iterations: 2\n"))
	e.setControl("verdict", "NEEDS_ITERATION")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.chain(10)
	e.wantState(n, workflow.HumanNeeded)
	if got, want := e.invocations(), []string{"plan 1", "review 1", "plan 1", "review 1"}; !slices.Equal(got, want) {
		t.Errorf("invocations = %q, want %q", got, want)
	}
	if got := e.commentsStarting(n, "### ralph needs a person"); got != 1 {
		t.Errorf("%d 'needs a person' comments, want 1", got)
	}
	found := false
	for _, c := range e.srv.Comments(n) {
		if strings.HasPrefix(c.Body, "### ralph needs a person") {
			found = strings.Contains(c.Body, "/ralph retry") && strings.Contains(c.Body, "2 times")
		}
	}
	if !found {
		t.Errorf("the Human Needed comment does not say why and how to go on")
	}
	status := e.statusComment(n)
	if !strings.Contains(status, "A person is needed") || !strings.Contains(status, "/ralph retry") {
		t.Errorf("status comment:\n%s", status)
	}

	// /ralph retry: back to Ready for Plan, and the same run plans again.
	e.setControl("verdict", "APPROVED")
	r := e.comment(n, "/ralph retry", maintainer)
	if r.exit != 0 || r.outputs["step"] != "plan" {
		t.Fatalf("retry: exit %d step %q\n%s%s", r.exit, r.outputs["step"], r.stdout, r.stderr)
	}
	e.wantState(n, workflow.PlanInReview)
}

// TestVerifyFails: a phase whose verify fails is not done; after max_failures it goes to a person.
func TestVerifyFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n"+agentEnvYAML+"research: false\nreview: skip\nverify:\n  - echo checking; test -f no-such-file\n")
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	rs := e.chain(10)
	var exits []int
	var steps []string
	for _, r := range rs {
		exits = append(exits, r.exit)
		steps = append(steps, r.outputs["step"])
	}
	if want := []string{"review", "implement", "implement"}; !slices.Equal(steps, want) {
		t.Fatalf("steps = %v, want %v", steps, want)
	}
	if want := []int{0, 1, 1}; !slices.Equal(exits, want) {
		t.Errorf("exit codes = %v, want %v (a failed step fails its run)", exits, want)
	}
	e.wantState(n, workflow.HumanNeeded)
	subjects, files := e.branch(branch)
	if len(matching(subjects, `Phase`)) != 0 || slices.Contains(files, "feature-1.txt") {
		t.Errorf("a phase that failed verify was pushed: %v %v", subjects, files)
	}
	if len(matching(subjects, `^ralph: plan for #1`)) != 1 {
		t.Errorf("the plan commit was lost: %v", subjects)
	}
	if got := e.commentsStarting(n, "### ralph: implement failed (1 of 2)"); got != 1 {
		t.Errorf("%d first-failure comments, want 1", got)
	}
	if got := e.commentsStarting(n, "### ralph: implement failed, a person is needed"); got != 1 {
		t.Errorf("%d escalation comments, want 1", got)
	}
	for _, c := range e.srv.Comments(n) {
		if strings.HasPrefix(c.Body, "### ralph: implement failed (1 of 2)") && !strings.Contains(c.Body, "test -f no-such-file") {
			t.Errorf("the failure comment does not name the verify command:\n%s", c.Body)
		}
	}
	if !strings.Contains(rs[1].stdout, "::error") {
		t.Errorf("a failed step made no error annotation:\n%s", rs[1].stdout)
	}
}

// TestPullClosedUnmerged: a pull request closed without merging hands the issue to a person.
func TestPullClosedUnmerged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\nself_review: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.chain(10)
	e.wantState(n, workflow.InReview)
	pr := e.srv.Pulls()[0]
	e.srv.ClosePull(pr.Number)
	r := e.run("pull_request", pullClosedEvent(t, e.srv.Pulls()[0]), nil)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.HumanNeeded)
	if r.outputs["paused"] != "true" {
		t.Errorf("paused = %q", r.outputs["paused"])
	}
	if got := e.commentsStarting(n, "### ralph needs a person"); got != 1 {
		t.Errorf("%d Human Needed comments, want 1", got)
	}
}

// TestBadConfig: an unknown key fails the run with an annotation naming the file, line and key, and
// changes nothing on the issue. Every problem of the file gets its annotation, at its line and column.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "review: auto\nagent:\n  preset: command\n  command: true\n  timout: 5m\nmax_phases: 0\n")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	before := len(e.srv.Requests())
	r := e.label(n, maintainer)
	if r.exit == 0 {
		t.Fatalf("a bad config did not fail the run")
	}
	if !strings.Contains(r.stdout, "file=.github/ralph.yml") || !strings.Contains(r.stdout, "line=5") || !strings.Contains(r.stdout, "agent.timout") {
		t.Errorf("annotation does not name file, line and key:\n%s", r.stdout)
	}
	for _, want := range []string{"::error col=3,file=.github/ralph.yml,line=5,", "::error col=13,file=.github/ralph.yml,line=6,"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no annotation %q for each problem:\n%s", want, r.stdout)
		}
	}
	if got := e.srv.Labels(n); !slices.Equal(got, []string{workflow.LabelBuild}) {
		t.Errorf("labels = %v, want only ralph:build", got)
	}
	if len(e.srv.Comments(n)) != 0 {
		t.Errorf("a bad config posted comments")
	}
	for _, req := range e.srv.Requests()[before:] {
		if req.Write() {
			t.Errorf("a bad config made a write: %s %s", req.Method, req.Path)
		}
	}
}

// TestUnauthorizedAndUnknown: a labeler without write permission is refused politely; an unknown
// command gets help.
func TestUnauthorizedAndUnknown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	e.srv.SetPermission("stranger", "read")
	n := e.srv.CreateIssue("stranger", "Add a greeting", "")
	r := e.label(n, "stranger")
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	if len(e.invocations()) != 0 {
		t.Errorf("the agent ran for an unauthorized labeler")
	}
	comments := e.srv.Comments(n)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "@stranger") || !strings.Contains(comments[0].Body, "write") {
		t.Errorf("comments = %+v, want one polite refusal", comments)
	}
	for _, l := range e.srv.Labels(n) {
		if _, ok := workflow.StateFromLabel(l); ok {
			t.Errorf("the issue got a state label: %v", e.srv.Labels(n))
		}
	}

	r = e.comment(n, "/ralph deploy now", maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d", r.exit)
	}
	last := e.srv.Comments(n)
	if body := last[len(last)-1].Body; !strings.Contains(body, "`deploy`") || !strings.Contains(body, "/ralph approve") {
		t.Errorf("unknown command reply:\n%s", body)
	}
}

func readControl(t *testing.T, e *env, name string) string {
	t.Helper()
	b, err := readFile(e.control, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDryRun: dry_run says what would happen and writes nothing.
func TestDryRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	before := len(e.srv.Requests())
	r := e.run("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), map[string]string{"dry_run": "true"})
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r.outputs["step"] != "research" || !strings.Contains(r.stdout, "would run research on #1") {
		t.Errorf("dry run did not say what it would do: outputs %v\n%s", r.outputs, r.stdout)
	}
	for _, req := range e.srv.Requests()[before:] {
		if req.Write() {
			t.Errorf("dry run wrote: %s %s", req.Method, req.Path)
		}
	}
	if len(e.invocations()) != 0 || e.branchExists(branch) || len(e.srv.Comments(n)) != 0 || len(e.srv.Dispatches()) != 0 {
		t.Errorf("dry run changed something")
	}
}

// TestStatusCommand: /ralph status refreshes the one status comment and replies with a link to it.
func TestStatusCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	before := len(e.srv.Comments(n))
	r := e.comment(n, "/ralph status", maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	comments := e.srv.Comments(n)
	if len(comments) != before+2 { // the person's comment and ralph's reply
		t.Fatalf("%d comments, want %d", len(comments), before+2)
	}
	if reply := comments[len(comments)-1].Body; !strings.Contains(reply, "Plan in Review") {
		t.Errorf("status reply = %q", reply)
	}
	e.statusComment(n)
}

// TestSweep: a scheduled sweep picks enrolled issues with a step to do, oldest first, skipping gates and
// terminal states; dry_run only lists them; a real sweep advances each one step.
func TestSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nsweep:\n  max: 2\n"))
	a := e.srv.CreateIssue("octocat", "First", "")
	b := e.srv.CreateIssue("octocat", "At the gate", "")
	c := e.srv.CreateIssue("octocat", "Second", "")
	d := e.srv.CreateIssue("octocat", "Third", "")
	e.srv.CreateIssue("octocat", "Not enrolled", "")
	e.srv.AddLabel(a, workflow.LabelBuild, maintainer)
	e.srv.AddLabel(b, workflow.LabelBuild, maintainer)
	e.seedRecord(b, workflow.PlanInReview)
	e.srv.AddLabel(c, workflow.LabelBuild, maintainer)
	e.seedRecord(c, workflow.ReadyForPlan)
	e.srv.AddLabel(d, workflow.LabelBuild, maintainer)
	schedule := map[string]any{"schedule": "17 * * * *"}

	r := e.run("schedule", schedule, map[string]string{"dry_run": "true"})
	if r.exit != 0 || r.outputs["issues"] != "[1,3]" {
		t.Fatalf("dry-run sweep: exit %d issues %q\n%s", r.exit, r.outputs["issues"], r.stdout)
	}
	if len(e.invocations()) != 0 {
		t.Fatalf("a dry-run sweep ran the agent")
	}
	r = e.run("schedule", schedule, nil)
	// Advanced by the sweep itself: nothing is left for a matrix job.
	if r.exit != 0 || r.outputs["issues"] != "[]" || !strings.Contains(r.stdout, "2 to advance: [1 3]") {
		t.Fatalf("sweep: exit %d issues %q\n%s%s", r.exit, r.outputs["issues"], r.stdout, r.stderr)
	}
	if got, want := e.invocations(), []string{"research 1", "plan 3"}; !slices.Equal(got, want) {
		t.Errorf("invocations = %q, want %q", got, want)
	}
	e.wantState(a, workflow.ReadyForPlan)
	e.wantState(c, workflow.PlanInReview)
	if got := e.srv.Labels(d); slices.ContainsFunc(got, func(l string) bool { _, ok := workflow.StateFromLabel(l); return ok }) {
		t.Errorf("#%d was advanced beyond sweep.max: %v", d, got)
	}
}
