package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func baseConfig(t testing.TB, extra string) string {
	return "agent:\n  preset: command\n  command: " + agentCommand(t) + "\n  timeout: 2m\n" + agentEnvYAML + "verify:\n  - test -f README.md\n" + extra
}

const branch = "ralph/1-add-a-greeting"

// TestFullFlowAuto follows one issue from the label to the merged pull request with review: auto and a
// two-phase plan, asserting GitHub's state after every run.
func TestFullFlowAuto(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	if n != 1 {
		t.Fatalf("first issue is #%d", n)
	}

	// 1. The label: enroll, research, document committed and posted, status comment, dispatch.
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("label run exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if got := r.outputs["step"]; got != "research" {
		t.Errorf("step output = %q, want research", got)
	}
	if got, want := r.outputs["from_state"], "research-needed"; got != want {
		t.Errorf("from_state = %q, want %q", got, want)
	}
	if got := r.outputs["state"]; got != "ready-for-plan" {
		t.Errorf("state output = %q", got)
	}
	if r.outputs["paused"] != "false" || r.outputs["issue"] != "1" {
		t.Errorf("outputs = %v", r.outputs)
	}
	if !strings.Contains(r.summary, "research") || !strings.Contains(r.summary, "Ready for Plan") {
		t.Errorf("step summary lacks the step and state:\n%s", r.summary)
	}
	if !strings.Contains(r.stdout, "::group::agent: research for #1") || !strings.Contains(r.stdout, "agent: working on research for #1") {
		t.Errorf("the agent's output is not in a log group:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "::add-mask::") {
		t.Errorf("the token was not masked")
	}
	subjects, files := e.branch(branch)
	if subjects[0] != "ralph: research for #1 Add a greeting" {
		t.Errorf("branch head = %q", subjects[0])
	}
	research := matching(files, `^thoughts/shared/research/\d{4}-\d\d-\d\d-GH-0001-add-a-greeting\.md$`)
	if len(research) != 1 {
		t.Fatalf("research document not on the branch: %v", files)
	}
	if got := e.commentsStarting(n, "## Research Document"); got != 1 {
		t.Errorf("%d research comments, want 1", got)
	}
	status := e.statusComment(n)
	for _, want := range []string{"Ready for Plan", "- [x] Research", "```mermaid", "ralph:record", research[0]} {
		if !strings.Contains(status, want) {
			t.Errorf("status comment lacks %q:\n%s", want, status)
		}
	}
	if ds := e.srv.Dispatches(); len(ds) != 1 || ds[0].Inputs["issue"] != "1" {
		t.Fatalf("dispatches after research = %+v, want one for issue 1", ds)
	}

	// 2. The dispatched chain: plan, review, phase 1, phase 2, pr — one step per run — then In Review.
	// After each run: its step, the state, the branch's newest commit, the comments, the dispatches.
	perRun := []struct {
		step, state, head, comment string
		dispatches                 int
	}{
		{"plan", "plan-in-review", "ralph: plan for #1 Add a greeting", "## Implementation Plan", 2},
		{"review", "in-progress", "ralph: plan review for #1 Add a greeting", "## Plan Review", 3},
		{"implement", "in-progress", "ralph: Phase 1 of 2: #1 Step 1", "", 4},
		{"implement", "in-progress", "ralph: Phase 2 of 2: #1 Step 2", "", 5},
		{"self-review", "in-progress", "ralph: self-review for #1 Add a greeting", "## Self-Review", 6},
		{"pr", "in-review", "ralph: self-review for #1 Add a greeting", "", 6},
	}
	var runs []result
	for i, want := range perRun {
		r, ok := e.next()
		if !ok {
			t.Fatalf("run %d: no dispatch to run", i+2)
		}
		runs = append(runs, r)
		if r.exit != 0 {
			t.Fatalf("run %d exit %d\n%s%s", i+2, r.exit, r.stdout, r.stderr)
		}
		if r.outputs["step"] != want.step || r.outputs["state"] != want.state {
			t.Fatalf("run %d: step %q state %q, want %q %q", i+2, r.outputs["step"], r.outputs["state"], want.step, want.state)
		}
		e.wantState(n, workflow.State(want.state))
		if subjects, _ := e.branch(branch); subjects[0] != want.head {
			t.Errorf("run %d: branch head %q, want %q", i+2, subjects[0], want.head)
		}
		if want.comment != "" && e.commentsStarting(n, want.comment) != 1 {
			t.Errorf("run %d: %d comments starting %q, want 1", i+2, e.commentsStarting(n, want.comment), want.comment)
		}
		if got := len(e.srv.Dispatches()); got != want.dispatches {
			t.Errorf("run %d: %d dispatches, want %d", i+2, got, want.dispatches)
		}
		if !strings.Contains(e.statusComment(n), workflow.State(want.state).Title()) {
			t.Errorf("run %d: the status comment does not show %s", i+2, want.state)
		}
	}
	if _, ok := e.next(); ok {
		t.Fatalf("In Review dispatched another run")
	}
	last := runs[len(runs)-1]
	if last.outputs["paused"] != "true" || last.outputs["state"] != "in-review" || last.outputs["pr_url"] == "" {
		t.Errorf("last run outputs = %v", last.outputs)
	}
	e.wantState(n, workflow.InReview)
	wantInv := []string{"research 1", "plan 1", "review 1", "implement 1 1 2", "implement 1 2 2", "self-review 1"}
	if got := e.invocations(); !slices.Equal(got, wantInv) {
		t.Errorf("agent invocations = %q, want %q", got, wantInv)
	}
	subjects, files = e.branch(branch)
	wantSubjects := []string{
		"ralph: self-review for #1 Add a greeting",
		"ralph: Phase 2 of 2: #1 Step 2",
		"ralph: Phase 1 of 2: #1 Step 1",
		"ralph: plan review for #1 Add a greeting",
		"ralph: plan for #1 Add a greeting",
		"ralph: research for #1 Add a greeting",
	}
	if !slices.Equal(subjects[:len(wantSubjects)], wantSubjects) {
		t.Errorf("branch commits = %q, want %q first", subjects, wantSubjects)
	}
	if !hasAll(files, "feature-1.txt", "feature-2.txt", "README.md", ".github/ralph.yml") {
		t.Errorf("branch files = %v", files)
	}
	if len(matching(files, `^thoughts/shared/plans/.*-GH-0001-add-a-greeting\.md$`)) != 1 ||
		len(matching(files, `^thoughts/shared/reviews/.*-GH-0001-add-a-greeting\.md$`)) != 1 {
		t.Errorf("plan or review document missing: %v", files)
	}
	for prefix, want := range map[string]int{"## Research Document": 1, "## Implementation Plan": 1, "## Plan Review": 1, "## Self-Review": 1} {
		if got := e.commentsStarting(n, prefix); got != want {
			t.Errorf("%d comments starting %q, want %d", got, prefix, want)
		}
	}
	pulls := e.srv.Pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	pr := pulls[0]
	if pr.Title != "Add a greeting (#1)" || pr.Head != branch || pr.Base != "main" || pr.Draft {
		t.Errorf("pull request = %+v", pr)
	}
	for _, want := range []string{"Closes #1", "Step 1", "Step 2", "thoughts/shared/plans/", "thoughts/shared/research/", "thoughts/shared/reviews/"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("pull request body lacks %q:\n%s", want, pr.Body)
		}
	}
	status = e.statusComment(n)
	for _, want := range []string{"In Review", "Phases (2 of 2 done)", "- [x] Pull request", pr.Head} {
		if !strings.Contains(status, want) {
			t.Errorf("status comment lacks %q:\n%s", want, status)
		}
	}
	if got := len(e.srv.Dispatches()); got != 6 {
		t.Errorf("%d dispatches, want 6 (research, plan, review, phase 1, phase 2, self-review each chain on; pr waits)", got)
	}

	// 3. The pull request is merged: Done.
	e.srv.MergePull(pr.Number)
	pulls = e.srv.Pulls()
	r = e.run("pull_request", pullClosedEvent(t, pulls[0]), nil)
	if r.exit != 0 {
		t.Fatalf("merge run exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.Done)
	if r.outputs["step"] != "merge" || r.outputs["state"] != "done" {
		t.Errorf("merge outputs = %v", r.outputs)
	}
	if !strings.Contains(e.statusComment(n), "- [x] Merged") {
		t.Errorf("status comment does not show the merge")
	}
	if len(e.invocations()) != len(wantInv) {
		t.Errorf("the merge ran the agent")
	}
	if !slices.Contains(e.srv.Labels(n), workflow.LabelBuild) {
		t.Errorf("ralph:build was removed")
	}
}

// TestPromptAndEnvironment checks what the agent receives: the prompt on stdin and in the file, the
// protocol's variables, and no credential.
func TestPromptAndEnvironment(t *testing.T) {
	t.Parallel()
	dump := `sh -c 'env > "$RALPH_TEST_CONTROL/env"; git config --list --show-origin > "$RALPH_TEST_CONTROL/gitconfig"; exec sh ` + agentScript(t) + `'`
	e := newEnv(t, "agent:\n  preset: command\n  command: "+yamlQuote(dump)+"\n"+agentEnvYAML)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Body text <!-- hidden --> here.")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	envDump, err := os.ReadFile(filepath.Join(e.control, "env"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(envDump), "test-token") {
		t.Errorf("the agent's environment holds the token:\n%s", envDump)
	}
	for _, want := range []string{"RALPH_COMMAND=research", "RALPH_ISSUE=1", "RALPH_ARTIFACT=/", "RALPH_PROMPT_FILE="} {
		if !strings.Contains(string(envDump), want) {
			t.Errorf("agent environment lacks %s", want)
		}
	}
	gitcfg, _ := os.ReadFile(filepath.Join(e.control, "gitconfig"))
	if strings.Contains(string(gitcfg), "test-token") || strings.Contains(strings.ToLower(string(gitcfg)), "extraheader") {
		t.Errorf("the worktree's git config holds a credential:\n%s", gitcfg)
	}
	prompt, err := os.ReadFile(filepath.Join(e.control, "prompt-1-research.md"))
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := os.ReadFile(filepath.Join(e.control, "stdin-1"))
	if string(stdin) != string(prompt) {
		t.Errorf("stdin and RALPH_PROMPT_FILE differ")
	}
	if !strings.Contains(string(prompt), "Add a greeting") || !strings.Contains(string(prompt), "untrusted") {
		t.Errorf("prompt:\n%s", prompt)
	}
}

func yamlQuote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
