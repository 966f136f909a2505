package ghapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// A request that reads, or writes what a second copy leaves as one does (a GraphQL query, an edit of a
// comment's whole body, adding a label), is sent again when its answer is lost: the run goes on instead of
// failing on a write GitHub had made. A new comment is not (the engine looks for it first).
func TestLostAnswerRepeated(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		method string
		path   string // suffix of the request whose first answer is lost
		call   func(ctx context.Context, srv *githubtest.Server) error
		repeat bool
	}{
		{"GraphQL query", http.MethodPost, "/graphql", func(ctx context.Context, srv *githubtest.Server) error {
			_, _, err := newClient(t, srv).IssueWithComments(ctx, 1)
			return err
		}, true},
		{"comment edit", http.MethodPatch, "/issues/comments/", func(ctx context.Context, srv *githubtest.Server) error {
			c := newClient(t, srv)
			cm, err := c.CreateComment(ctx, 1, "one")
			if err != nil {
				return err
			}
			_, err = c.UpdateComment(ctx, cm.ID, "two")
			return err
		}, true},
		{"label add", http.MethodPost, "/issues/1/labels", func(ctx context.Context, srv *githubtest.Server) error {
			return newClient(t, srv).AddLabels(ctx, 1, "bug")
		}, true},
		{"new comment", http.MethodPost, "/issues/1/comments", func(ctx context.Context, srv *githubtest.Server) error {
			_, err := newClient(t, srv).CreateComment(ctx, 1, "one")
			return err
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			srv.CreateIssue("octocat", "An issue", "")
			lost := 0
			srv.LoseResponse(func(method, path string, status int) bool {
				if method != c.method || !strings.Contains(path, c.path) || lost > 0 {
					return false
				}
				lost++
				return true
			})
			err := c.call(context.Background(), srv)
			if lost != 1 {
				t.Fatalf("%d answers lost, want 1", lost)
			}
			if got, want := err == nil, c.repeat; got != want {
				t.Errorf("succeeded = %v (err %v), want %v", got, err, want)
			}
		})
	}
}
