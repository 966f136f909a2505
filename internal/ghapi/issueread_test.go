package ghapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// IssueWithComments gives, in one GraphQL query (one more per further 100 comments), what the REST calls
// Issue and Comments give: the same issue and comments, field for field.
func TestIssueWithComments(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()

	quiet := srv.CreateIssue("alice", "Quiet", "")
	busy := srv.CreateIssue("alice", "Add a flag", "Please.", "bug", "ralph:build")
	srv.AddComment(busy, "bob", "<!-- ralph:status -->\nthe record")
	srv.AddComment(busy, "github-actions[bot]", "## Research Document\n…")
	closed := srv.CreateIssue("carol", "Old", "Done already.")
	srv.AddComment(closed, "carol", "closing")
	srv.CloseIssue(closed)
	long := srv.CreateIssue("alice", "Long", "Many comments.")
	for i := 0; i < 230; i++ {
		srv.AddComment(long, []string{"bob", "dependabot[bot]"}[i%2], fmt.Sprintf("comment %d", i))
	}

	branch(t, c, srv, "ralph/9-x")
	open, err := c.CreatePull(ctx, ghapi.NewPull{Title: "Open", Head: "ralph/9-x", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	srv.AddComment(open.Number, "bob", "looks good")
	branch(t, c, srv, "ralph/10-x")
	merged, err := c.CreatePull(ctx, ghapi.NewPull{Title: "Merged", Head: "ralph/10-x", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	srv.MergePull(merged.Number)

	for _, tt := range []struct {
		n       int
		queries int
	}{{quiet, 1}, {busy, 1}, {closed, 1}, {long, 3}, {open.Number, 1}, {merged.Number, 1}} {
		wantIssue, err := c.Issue(ctx, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		wantComments, err := c.Comments(ctx, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		before := len(srv.GraphQLRequests())
		gotIssue, gotComments, err := c.IssueWithComments(ctx, tt.n)
		if err != nil {
			t.Fatalf("#%d: %v", tt.n, err)
		}
		// GraphQL has no summary of an issue's dependencies (the sweep reads it from the REST listing).
		wantIssue.Dependencies = nil
		if diff := cmp.Diff(wantIssue, gotIssue); diff != "" {
			t.Errorf("#%d: the issue (-REST +GraphQL):\n%s", tt.n, diff)
		}
		if diff := cmp.Diff(wantComments, gotComments); diff != "" {
			t.Errorf("#%d: the comments (-REST +GraphQL):\n%s", tt.n, diff)
		}
		reqs := srv.GraphQLRequests()[before:]
		if len(reqs) != tt.queries {
			t.Errorf("#%d: %d GraphQL queries, want %d", tt.n, len(reqs), tt.queries)
		}
		for _, q := range reqs {
			if len(q.Errors) > 0 {
				t.Errorf("#%d: GraphQL errors: %v", tt.n, q.Errors)
			}
		}
	}
	if _, _, err := c.IssueWithComments(ctx, 999); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("a missing issue: %v, want ErrNotFound", err)
	}
}

// IssueWithCommentsFor asks a person's role in the same query: the role GitHub names for a collaborator,
// "" for anyone else, and "" (no error) when the token may not see the collaborators.
func TestIssueWithCommentsFor(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	n := srv.CreateIssue("alice", "Add a flag", "Please.", "ralph:build")
	srv.AddComment(n, "bob", "hello")
	for login, role := range map[string]string{"mona": "write", "hubot": "triage", "octocat": "admin", "maint": "maintain"} {
		srv.SetPermission(login, role)
	}
	srv.SetPermission("stranger", "none")
	wantIssue, wantComments, err := c.IssueWithComments(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	for login, want := range map[string]string{"mona": "write", "hubot": "triage", "octocat": "admin", "maint": "maintain", "stranger": "", "mon": ""} {
		before := len(srv.GraphQLRequests())
		is, comments, perm, err := c.IssueWithCommentsFor(ctx, n, login)
		if err != nil {
			t.Fatalf("%s: %v", login, err)
		}
		if perm != want {
			t.Errorf("%s's role = %q, want %q", login, perm, want)
		}
		if !cmp.Equal(is, wantIssue) || !cmp.Equal(comments, wantComments) {
			t.Errorf("%s: the issue or comments differ from IssueWithComments'", login)
		}
		if got := len(srv.GraphQLRequests()) - before; got != 1 {
			t.Errorf("%s: %d queries, want 1", login, got)
		}
	}
	srv.HideCollaborators()
	is, _, perm, err := c.IssueWithCommentsFor(ctx, n, "mona")
	if err != nil || perm != "" || is.Number != n {
		t.Errorf("collaborators hidden: #%d, role %q, %v; want the issue, no role, no error", is.Number, perm, err)
	}
}
