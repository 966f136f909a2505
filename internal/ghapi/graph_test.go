package ghapi

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func TestIssueGraph(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := graphClient(t, srv)
	ctx := context.Background()
	parent := srv.CreateIssue("mona", "Big", "")
	a, err := c.CreateIssue(ctx, NewIssue{Title: "Part A", Body: "first", Labels: []string{"ralph:build"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateIssue(ctx, NewIssue{Title: "Part B"})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Labels(a.Number); !slices.Equal(got, []string{"ralph:build"}) {
		t.Errorf("labels of the new issue = %v", got)
	}
	for _, child := range []Issue{a, b} {
		if err := c.AddSubIssue(ctx, parent, child.ID); err != nil {
			t.Fatal(err)
		}
	}
	// The API takes the database id: a number is refused.
	if err := c.AddSubIssue(ctx, parent, int64(b.Number)); err == nil {
		t.Errorf("AddSubIssue took an issue number for an id")
	}
	subs, err := c.SubIssues(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 2 || subs[0].Number != a.Number || subs[1].Number != b.Number {
		t.Errorf("SubIssues = %+v", subs)
	}
	if err := c.AddBlockedBy(ctx, b.Number, a.ID); err != nil {
		t.Fatal(err)
	}
	blockers, err := c.BlockedBy(ctx, b.Number)
	if err != nil || len(blockers) != 1 || blockers[0].Number != a.Number {
		t.Errorf("BlockedBy = %+v, %v", blockers, err)
	}
	if got := srv.BlockedBy(b.Number); !slices.Equal(got, []int{a.Number}) {
		t.Errorf("server's blocked-by = %v", got)
	}

	if err := c.SetLabels(ctx, a.Number, []string{"ralph:build", "ralph:done"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Labels(a.Number); !slices.Equal(got, []string{"ralph:build", "ralph:done"}) {
		t.Errorf("after SetLabels: %v", got)
	}
	if err := c.SetLabels(ctx, a.Number, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Labels(a.Number); len(got) != 0 {
		t.Errorf("after SetLabels(nil): %v", got)
	}

	for _, n := range []int{3, 12} {
		if err := c.CreateRef(ctx, "refs/ralph/locks/"+strconv.Itoa(n), mainSHA(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := c.MatchingRefs(ctx, "ralph/locks/")
	var names []string
	for _, r := range refs {
		names = append(names, r.Ref)
	}
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"refs/ralph/locks/12", "refs/ralph/locks/3"}) {
		t.Errorf("MatchingRefs = %v, %v", names, err)
	}
}

func mainSHA(t *testing.T, c *Client) string {
	t.Helper()
	r, err := c.GetRef(context.Background(), "heads/main")
	if err != nil {
		t.Fatal(err)
	}
	return r.Object.SHA
}

func graphClient(t *testing.T, srv *githubtest.Server) *Client {
	t.Helper()
	c, err := New(Options{Endpoints: Endpoints{API: srv.URL, Server: srv.ServerURL, GraphQL: srv.GraphQLURL}, Token: "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
