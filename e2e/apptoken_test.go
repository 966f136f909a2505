package e2e

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// ralphWorkflow is a workflow that runs ralph with the given token expression, as gh ralph init writes it
// (the App's step left out: the test server is given the App's token directly).
func ralphWorkflow(token string) string {
	return "name: ralph\non:\n  issues:\n    types: [labeled]\n  workflow_dispatch:\n    inputs:\n      issue:\n        required: true\n" +
		"permissions:\n  contents: write\n  issues: write\n  pull-requests: write\n  actions: write\n" +
		"jobs:\n  ralph:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n        with:\n          token: " + token + "\n"
}

// TestAppTokenEndToEnd: with a GitHub App's token (the README's recipe), ralph takes an issue from the label
// to the merged pull request, writing as the App's bot, whose record it believes; the pull request is the
// App's, so GitHub starts the repository's pull_request workflows (its CI) for it, and nothing says
// otherwise. The repository does not let the Actions token open pull requests: the App's does not need it.
func TestAppTokenEndToEnd(t *testing.T) {
	t.Parallel()
	const app = "ralph-app[bot]"
	e := newEnvWith(t, baseConfig(t, "research: false\nreview: skip\nself_review: false\n"), githubtest.Options{TokenLogin: app})
	e.pushFile(".github/workflows/ralph.yml", ralphWorkflow("${{ steps.app-token.outputs.token }}"))
	e.srv.SetWorkflowPermissions("read", false)
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("label run: exit %d\n%s", r.exit, r.stdout)
	}
	runs := e.chain(10)
	e.wantState(n, workflow.InReview)
	pulls := e.srv.Pulls()
	if len(pulls) != 1 || pulls[0].Author != app || !pulls[0].StartsWorkflows() {
		t.Fatalf("pull requests %+v: want one, opened by %s, for which GitHub starts workflows", pulls, app)
	}
	for _, r := range runs {
		if strings.Contains(r.summary+r.stdout, "opened with the Actions token") {
			t.Errorf("a run says the App's pull request starts no CI:\n%s", r.summary)
		}
	}
	for _, c := range e.srv.Comments(n) {
		if c.User != app {
			t.Errorf("a comment by %s, want the App's bot", c.User)
		}
	}
	e.srv.MergePull(pulls[0].Number)
	if r := e.run("pull_request", pullClosedEvent(t, e.srv.Pulls()[0]), nil); r.exit != 0 {
		t.Fatalf("merge run: exit %d\n%s", r.exit, r.stdout)
	}
	e.wantState(n, workflow.Done)
	e.invariants(n)
}

// With the Actions token, the run that opens the pull request says, in the log and the step summary, that
// GitHub starts no pull_request workflows for it, and what to do.
func TestActionsTokenPullRequestStartsNoCI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\nself_review: false\n"))
	e.pushFile(".github/workflows/ralph.yml", ralphWorkflow("${{ secrets.GITHUB_TOKEN }}"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	runs := e.chain(10)
	e.wantState(n, workflow.InReview)
	if p := e.srv.Pulls(); len(p) != 1 || p[0].StartsWorkflows() {
		t.Fatalf("pull requests %+v", p)
	}
	said := 0
	for _, r := range runs {
		if r.outputs["step"] == "pr" {
			for _, want := range []string{"::notice::", "opened with the Actions token, so GitHub starts no pull_request workflows for it", "CI on ralph's pull requests"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the pr run's log does not say %q:\n%s", want, r.stdout)
				}
			}
			if strings.Contains(r.summary, "starts no pull_request workflows") {
				said++
			}
		} else if strings.Contains(r.stdout, "starts no pull_request workflows") {
			t.Errorf("a %s run speaks of CI", r.outputs["step"])
		}
	}
	if said != 1 {
		t.Errorf("%d step summaries say the pull request starts no CI, want 1", said)
	}
}
