package project

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// fixture is a test server with project 1 of octo (an organization) and two issues.
type fixture struct {
	srv    *githubtest.Server
	issues []string // node ids of issues #1 and #2
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{})
	srv.CreateProject("octo", 1, "Roadmap")
	gh, err := ghapi.New(ghapi.Options{Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token: "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	for _, title := range []string{"First", "Second"} {
		n := srv.CreateIssue("mona", title, "")
		is, err := gh.Issue(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		f.issues = append(f.issues, is.NodeID)
	}
	return f
}

func (f *fixture) board(t *testing.T, owner string, number int, field, token string) *Board {
	t.Helper()
	b, err := New(Options{GraphQL: f.srv.GraphQLURL, Token: token, Transport: f.srv.Client().Transport,
		Owner: owner, Number: number, Field: field})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// operations lists the GraphQL operations sent since the last call.
func (f *fixture) operations(seen *int) []string {
	log := f.srv.GraphQLRequests()
	var ops []string
	for _, r := range log[*seen:] {
		if len(r.Errors) > 0 {
			ops = append(ops, r.Operation+" (errors: "+strings.Join(r.Errors, "; ")+")")
			continue
		}
		ops = append(ops, r.Operation)
	}
	*seen = len(log)
	return ops
}

func TestEnsureFieldCreatesTheStateField(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	b := f.board(t, "octo", 1, "", "test-token")

	created, err := b.EnsureField(ctx)
	if err != nil || !created {
		t.Fatalf("EnsureField = %v, %v; want true, nil", created, err)
	}
	var want []string
	for _, s := range workflow.States() {
		want = append(want, s.Title())
	}
	if len(want) != 11 {
		t.Fatalf("the workflow has %d states, the board expects 11", len(want))
	}
	if diff := cmp.Diff(want, f.srv.ProjectFieldOptions("octo", 1, DefaultField)); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	// Again: nothing to do, one query.
	seen := len(f.srv.GraphQLRequests())
	created, err = f.board(t, "octo", 1, "", "test-token").EnsureField(ctx)
	if err != nil || created {
		t.Fatalf("second EnsureField = %v, %v; want false, nil", created, err)
	}
	if diff := cmp.Diff([]string{"query repositoryOwner"}, f.operations(&seen)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if got := len(f.srv.ProjectFieldOptions("octo", 1, DefaultField)); got != 11 {
		t.Errorf("after a second EnsureField the field has %d options", got)
	}
	// The field EnsureField made is the one SetState uses, with no further lookup.
	if err := b.SetState(ctx, f.issues[0], workflow.ResearchNeeded); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.srv.ProjectItemValue("octo", 1, 1, DefaultField); got != "Research Needed" {
		t.Errorf("option = %q, want Research Needed", got)
	}
}

func TestSetStateFollowsTheState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.board(t, "octo", 1, "", "test-token").EnsureField(ctx); err != nil {
		t.Fatal(err)
	}
	seen := len(f.srv.GraphQLRequests())
	b := f.board(t, "octo", 1, "", "test-token")

	steps := []struct {
		issue int
		state workflow.State
		want  []string // the GraphQL operations the call sends
	}{
		// Cold, and #1 is not on the board: one query, then add and set.
		{1, workflow.ResearchNeeded, []string{"query repositoryOwner node", "mutation addProjectV2ItemById", "mutation updateProjectV2ItemFieldValue"}},
		// Warm: the ids are cached.
		{1, workflow.ResearchInProgress, []string{"mutation updateProjectV2ItemFieldValue"}},
		{1, workflow.ReadyForPlan, []string{"mutation updateProjectV2ItemFieldValue"}},
		// Another issue: add (which returns the item if it is there) and set.
		{2, workflow.Backlog, []string{"mutation addProjectV2ItemById", "mutation updateProjectV2ItemFieldValue"}},
		{2, workflow.Canceled, []string{"mutation updateProjectV2ItemFieldValue"}},
	}
	for _, st := range steps {
		if err := b.SetState(ctx, f.issues[st.issue-1], st.state); err != nil {
			t.Fatalf("SetState(#%d, %s): %v", st.issue, st.state, err)
		}
		if got, ok := f.srv.ProjectItemValue("octo", 1, st.issue, DefaultField); !ok || got != st.state.Title() {
			t.Errorf("after SetState(#%d, %s) the board says %q, %v", st.issue, st.state, got, ok)
		}
		if diff := cmp.Diff(st.want, f.operations(&seen)); diff != "" {
			t.Errorf("SetState(#%d, %s) operations (-want +got):\n%s", st.issue, st.state, diff)
		}
	}

	// A new Board (a new process) whose issue is already on the board: one query and one mutation.
	cold := f.board(t, "octo", 1, "", "test-token")
	if err := cold.SetState(ctx, f.issues[0], workflow.PlanInProgress); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"query repositoryOwner node", "mutation updateProjectV2ItemFieldValue"}, f.operations(&seen)); diff != "" {
		t.Errorf("cold SetState of an issue on the board (-want +got):\n%s", diff)
	}
	if got, _ := f.srv.ProjectItemValue("octo", 1, 1, DefaultField); got != "Plan in Progress" {
		t.Errorf("option = %q, want Plan in Progress", got)
	}
}

func TestSetStateRecoversFromStaleCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	b := f.board(t, "octo", 1, "", "test-token")
	if _, err := b.EnsureField(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.SetState(ctx, f.issues[0], workflow.ResearchNeeded); err != nil {
		t.Fatal(err)
	}
	// A person takes the issue off the board; the cached item id no longer works.
	f.srv.RemoveProjectItem("octo", 1, 1)
	if err := b.SetState(ctx, f.issues[0], workflow.ReadyForPlan); err != nil {
		t.Fatalf("SetState after the item was removed: %v", err)
	}
	if got, ok := f.srv.ProjectItemValue("octo", 1, 1, DefaultField); !ok || got != "Ready for Plan" {
		t.Errorf("board says %q, %v; want Ready for Plan", got, ok)
	}
}

func TestUserProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.srv.CreateProject("mona", 7, "Mona's board")
	b := f.board(t, "mona", 7, "Ralph", "test-token")
	if created, err := b.EnsureField(ctx); err != nil || !created {
		t.Fatalf("EnsureField = %v, %v", created, err)
	}
	if err := b.SetState(ctx, f.issues[1], workflow.InReview); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.srv.ProjectItemValue("mona", 7, 2, "Ralph"); got != "In Review" {
		t.Errorf("option = %q, want In Review", got)
	}
}

func TestBoardErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.srv.AddProjectField("octo", 1, "Partial", "Research Needed", "Done")
	f.srv.CreateProject("octo", 2, "Other")

	t.Run("project not found", func(t *testing.T) {
		err := f.board(t, "octo", 9, "", "test-token").SetState(ctx, f.issues[0], workflow.Done)
		for _, want := range []string{"project 9 of octo not found", "project scope", "Projects permission"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to contain %q", err, want)
			}
		}
		_, err = f.board(t, "nobody-here", 1, "", "test-token").EnsureField(ctx)
		if err == nil || !strings.Contains(err.Error(), "project 1 of nobody-here not found") {
			t.Errorf("unknown owner: err = %v", err)
		}
	})
	t.Run("field missing", func(t *testing.T) {
		err := f.board(t, "octo", 2, "", "test-token").SetState(ctx, f.issues[0], workflow.Done)
		if err == nil || !strings.Contains(err.Error(), `no single-select field "Workflow State"`) || !strings.Contains(err.Error(), "gh ralph init --project") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("field not single-select", func(t *testing.T) {
		_, err := f.board(t, "octo", 2, "Title", "test-token").EnsureField(ctx)
		if err == nil || !strings.Contains(err.Error(), "not a single-select field") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("option missing", func(t *testing.T) {
		b := f.board(t, "octo", 1, "Partial", "test-token")
		if err := b.SetState(ctx, f.issues[0], workflow.ResearchNeeded); err != nil {
			t.Fatalf("an option the field has: %v", err)
		}
		err := b.SetState(ctx, f.issues[0], workflow.PlanInReview)
		if err == nil || !strings.Contains(err.Error(), `no option "Plan in Review"`) {
			t.Errorf("err = %v", err)
		}
		_, err = b.EnsureField(ctx)
		var missing *MissingOptionsError
		if !errors.As(err, &missing) || len(missing.Missing) != 9 || missing.Missing[0] != "Backlog" {
			t.Errorf("EnsureField on a partial field: %v", err)
		}
	})
	t.Run("token without access", func(t *testing.T) {
		g := newFixture(t)
		g.srv.SetProjectToken("project-token")
		_, err := g.board(t, "octo", 1, "", "test-token").EnsureField(ctx)
		if !errors.Is(err, ErrNoAccess) {
			t.Errorf("err = %v, want ErrNoAccess", err)
		}
		if _, err := g.board(t, "octo", 1, "", "project-token").EnsureField(ctx); err != nil {
			t.Errorf("with the project token: %v", err)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		if _, err := New(Options{GraphQL: f.srv.GraphQLURL, Token: "t", Owner: "octo"}); err == nil {
			t.Error("no project number: no error")
		}
		if _, err := New(Options{GraphQL: f.srv.GraphQLURL, Owner: "octo", Number: 1}); err == nil {
			t.Error("no token: no error")
		}
	})
}
