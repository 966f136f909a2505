package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/project"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// boardEnv is a repository whose config names project 2 of octo, which only "project-token" can reach
// (the run's own token, like an Actions GITHUB_TOKEN, cannot), with the state field already made.
func boardEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, baseConfig(t, "review: skip\nproject:\n  owner: octo\n  number: 2\n"))
	e.srv.CreateProject("octo", 2, "Roadmap")
	e.srv.SetProjectToken("project-token")
	b, err := project.New(project.Options{GraphQL: e.srv.GraphQLURL, Token: "project-token", Transport: e.srv.Client().Transport,
		Owner: "octo", Number: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnsureField(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestProjectBoardFollowsState runs an issue from the label to its pull request with project_token set,
// and checks after every run that the board's option is the issue's state.
func TestProjectBoardFollowsState(t *testing.T) {
	t.Parallel()
	e := boardEnv(t)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	inputs := map[string]string{"project_token": "project-token"}

	check := func(r result, run string) {
		t.Helper()
		if r.exit != 0 {
			t.Fatalf("%s: exit %d\n%s%s", run, r.exit, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "::warning::") {
			t.Errorf("%s warned:\n%s", run, r.stdout)
		}
		if strings.Contains(strings.Replace(r.stdout, "::add-mask::project-token", "", 1)+r.stderr, "project-token") {
			t.Errorf("%s printed the project token", run)
		}
		state := e.state(n)
		got, ok := e.srv.ProjectItemValue("octo", 2, n, project.DefaultField)
		if !ok || got != state.Title() {
			t.Errorf("after %s #%d is %s but the board says %q (%v)", run, n, state.Title(), got, ok)
		}
	}

	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	before := len(e.srv.GraphQLRequests())
	check(e.run("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), inputs), "the label run")
	// Enrolled (Research Needed), researching, Ready for Plan: a cold board, the issue added once.
	t.Logf("the label run: %d GraphQL requests", len(e.srv.GraphQLRequests())-before)
	if got := len(e.srv.GraphQLRequests()) - before; got > 5 {
		t.Errorf("the label run sent %d GraphQL requests, want at most 5", got)
	}
	e.wantState(n, workflow.ReadyForPlan)

	for runs := 0; e.state(n) != workflow.InReview; runs++ {
		if runs == 8 {
			t.Fatalf("no pull request after %d dispatched runs; #%d is %s", runs, n, e.state(n).Title())
		}
		ds := e.srv.Dispatches()
		if e.seen >= len(ds) {
			t.Fatalf("the chain stopped at %s", e.state(n).Title())
		}
		d := ds[e.seen]
		e.seen++
		before := len(e.srv.GraphQLRequests())
		check(e.run("workflow_dispatch", dispatchEvent(t, d.Inputs), inputs), "dispatched run "+d.Inputs["issue"].(string))
		t.Logf("dispatched run (now %s): %d GraphQL requests", e.state(n).Title(), len(e.srv.GraphQLRequests())-before)
		if got := len(e.srv.GraphQLRequests()) - before; got > 4 {
			t.Errorf("a dispatched run sent %d GraphQL requests, want at most 4", got)
		}
	}
	for _, r := range e.srv.GraphQLRequests() {
		if len(r.Errors) > 0 {
			t.Errorf("GraphQL %s answered errors: %v", r.Operation, r.Errors)
		}
	}
}

// TestProjectWithoutToken: a board in the config but no project_token input warns how to pass one, and the
// step runs as usual.
func TestProjectWithoutToken(t *testing.T) {
	t.Parallel()
	e := boardEnv(t)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	before := len(e.srv.GraphQLRequests())
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if !strings.Contains(r.stdout, "::warning::") || !strings.Contains(r.stdout, "project_token") || !strings.Contains(r.stdout, "cannot reach Projects") {
		t.Errorf("no warning about project_token:\n%s", r.stdout)
	}
	for _, q := range e.srv.GraphQLRequests()[before:] {
		if strings.Contains(strings.ToLower(q.Query), "projectv2") {
			t.Errorf("a request to the board without a project token: %s", q.Operation)
		}
	}
	if _, ok := e.srv.ProjectItemValue("octo", 2, n, project.DefaultField); ok {
		t.Error("the board was set without a project token")
	}
}
