package githubtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// openPull opens a pull request from branch as the server's token (ralph) and answers its number.
func openPull(t *testing.T, s *Server, branch string) int {
	t.Helper()
	pushBranch(t, s, branch)
	r := do(t, s, "POST", "/repos/octo/demo/pulls", map[string]any{"title": "feature (#1)", "head": branch, "base": "main", "body": "Closes #1"})
	want(t, r, 201)
	return decode[struct{ Number int }](t, r).Number
}

type ghReview struct {
	User              ghUser
	Body, State       string
	AuthorAssociation string `json:"author_association"`
}

func TestReviews(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	s.CreateIssue("alice", "feature", "")
	pr := openPull(t, s, "ralph/1-feature")
	s.SetPermission("alice", "write")
	s.AddReview(pr, "alice", "CHANGES_REQUESTED", "please rename it")
	path := fmt.Sprintf("/repos/octo/demo/pulls/%d/reviews", pr)

	got := decode[[]ghReview](t, do(t, s, "GET", path, nil))
	wantReviews := []ghReview{{User: ghUser{Login: "alice", Type: "User"}, Body: "please rename it", State: "CHANGES_REQUESTED", AuthorAssociation: "COLLABORATOR"}}
	if diff := cmp.Diff(wantReviews, got); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}

	tests := []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"changes requested on one's own pull request", map[string]any{"event": "REQUEST_CHANGES", "body": "no"}, 422, "Can not request changes on your own pull request"},
		{"approving one's own pull request", map[string]any{"event": "APPROVE"}, 422, "Can not approve your own pull request"},
		{"a comment needs a body", map[string]any{"event": "COMMENT"}, 422, "Body is required"},
		{"an unknown event", map[string]any{"event": "LGTM", "body": "x"}, 422, "allowed values"},
		{"a property GitHub lacks", map[string]any{"event": "COMMENT", "body": "x", "verdict": "ok"}, 422, "verdict"},
		{"a comment", map[string]any{"event": "COMMENT", "body": "answered in abc123"}, 200, "COMMENTED"},
	}
	for _, tt := range tests {
		r := do(t, s, "POST", path, tt.body)
		if r.status != tt.status || !strings.Contains(string(r.body), tt.msg) {
			t.Errorf("%s: status %d %s, want %d %q", tt.name, r.status, r.body, tt.status, tt.msg)
		}
	}
	if got, want := len(s.Reviews(pr)), 2; got != want {
		t.Errorf("%d reviews, want %d: %+v", got, want, s.Reviews(pr))
	}
}

func TestReviewsByAPersonalToken(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	s.CreateIssue("alice", "feature", "")
	pr := openPull(t, s, "ralph/1-feature")
	// A pull request someone else opened can be approved and sent back by the token's owner.
	s.mu.Lock()
	s.issues[pr].author = "ralph-app[bot]"
	s.mu.Unlock()
	for _, event := range []string{"APPROVE", "REQUEST_CHANGES"} {
		r := do(t, s, "POST", fmt.Sprintf("/repos/octo/demo/pulls/%d/reviews", pr), map[string]any{"event": event, "body": "see the threads"})
		want(t, r, 200)
	}
	var states []string
	for _, r := range s.Reviews(pr) {
		states = append(states, r.State)
	}
	if diff := cmp.Diff([]string{"APPROVED", "CHANGES_REQUESTED"}, states); diff != "" {
		t.Errorf("review states (-want +got):\n%s", diff)
	}
}

type ghReviewComment struct {
	ID                int64
	Body, Path        string
	DiffHunk          string `json:"diff_hunk"`
	Line              int
	InReplyTo         int64  `json:"in_reply_to_id"`
	AuthorAssociation string `json:"author_association"`
	User              ghUser
}

func TestReviewCommentsAndReplies(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	s.CreateIssue("alice", "feature", "")
	pr := openPull(t, s, "ralph/1-feature")
	s.SetPermission("alice", "write")
	hunk := "@@ -1,3 +1,4 @@\n package main\n+func slow() {}"
	thread, ids := s.AddReviewThread(pr, "main.go", 2, hunk,
		ThreadComment{User: "alice", Body: "this is slow"}, ThreadComment{User: "bob", Body: "agreed"})

	list := decode[[]ghReviewComment](t, do(t, s, "GET", fmt.Sprintf("/repos/octo/demo/pulls/%d/comments", pr), nil))
	wantList := []ghReviewComment{
		{ID: ids[0], Body: "this is slow", Path: "main.go", DiffHunk: hunk, Line: 2, AuthorAssociation: "COLLABORATOR", User: ghUser{Login: "alice", Type: "User"}},
		{ID: ids[1], Body: "agreed", Path: "main.go", DiffHunk: hunk, Line: 2, InReplyTo: ids[0], AuthorAssociation: "NONE", User: ghUser{Login: "bob", Type: "User"}},
	}
	if diff := cmp.Diff(wantList, list); diff != "" {
		t.Errorf("review comments (-want +got):\n%s", diff)
	}

	replies := fmt.Sprintf("/repos/octo/demo/pulls/%d/comments/%%d/replies", pr)
	r := do(t, s, "POST", fmt.Sprintf(replies, ids[0]), map[string]any{"body": "Fixed in abc1234."})
	want(t, r, 201)
	reply := decode[ghReviewComment](t, r)
	if reply.InReplyTo != ids[0] || reply.User.Login != BotLogin || reply.Path != "main.go" {
		t.Errorf("reply %+v: want a reply to %d by %s on main.go", reply, ids[0], BotLogin)
	}
	want(t, do(t, s, "POST", fmt.Sprintf(replies, ids[1]), map[string]any{"body": "a reply to a reply"}), 422)
	want(t, do(t, s, "POST", fmt.Sprintf(replies, 999999), map[string]any{"body": "no such comment"}), 404)
	want(t, do(t, s, "POST", fmt.Sprintf(replies, ids[0]), map[string]any{}), 422)

	got := s.ReviewComments(pr)
	if len(got) != 3 || got[2].ThreadID != thread || got[2].Body != "Fixed in abc1234." {
		t.Errorf("ReviewComments = %+v, want the reply last in thread %s", got, thread)
	}
}

func TestReviewThreadsGraphQL(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	s.CreateIssue("alice", "feature", "")
	pr := openPull(t, s, "ralph/1-feature")
	s.SetPermission("alice", "write")
	done, _ := s.AddReviewThread(pr, "a.go", 1, "@@ a", ThreadComment{User: "alice", Body: "resolved one"})
	open, ids := s.AddReviewThread(pr, "b.go", 7, "@@ b", ThreadComment{User: "alice", Body: "first"}, ThreadComment{User: "github-actions[bot]", Body: "second"})
	s.ResolveThread(done)
	q := `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      headRefName
      reviewThreads(first: 50) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved path line
          comments(first: 100) { nodes { fullDatabaseId body diffHunk authorAssociation author { __typename login } } }
        }
      }
    }
  }
}`
	status, data, errs, raw := postGraphQL(t, s, "test-token", q, map[string]any{"owner": "octo", "name": "demo", "number": pr})
	if status != 200 || len(errs) > 0 {
		t.Fatalf("status %d, errors %v\n%s", status, errs, raw)
	}
	threads := data["repository"].(map[string]any)["pullRequest"].(map[string]any)["reviewThreads"].(map[string]any)["nodes"].([]any)
	second := threads[1].(map[string]any)
	wantSecond := map[string]any{
		"id": open, "isResolved": false, "path": "b.go", "line": float64(7),
		"comments": map[string]any{"nodes": []any{
			map[string]any{"fullDatabaseId": fmt.Sprint(ids[0]), "body": "first", "diffHunk": "@@ b", "authorAssociation": "COLLABORATOR",
				"author": map[string]any{"__typename": "User", "login": "alice"}},
			map[string]any{"fullDatabaseId": fmt.Sprint(ids[1]), "body": "second", "diffHunk": "@@ b", "authorAssociation": "NONE",
				"author": map[string]any{"__typename": "Bot", "login": "github-actions"}},
		}},
	}
	if diff := cmp.Diff(wantSecond, second); diff != "" {
		t.Errorf("second thread (-want +got):\n%s", diff)
	}
	if got := threads[0].(map[string]any)["isResolved"]; got != true {
		t.Errorf("first thread isResolved = %v, want true", got)
	}
	// A field GitHub lacks fails as on GitHub.
	_, _, errs, _ = postGraphQL(t, s, "test-token", `query { repository(owner: "octo", name: "demo") { pullRequest(number: 2) { reviewThreads(first: 1) { nodes { resolved } } } } }`, nil)
	if len(errs) == 0 {
		t.Error("a field the schema lacks was accepted")
	}
}

func TestRequestReviewers(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	s.CreateIssue("alice", "feature", "")
	pr := openPull(t, s, "ralph/1-feature")
	s.SetPermission("alice", "write")
	s.SetPermission("eve", "none")
	path := fmt.Sprintf("/repos/octo/demo/pulls/%d/requested_reviewers", pr)
	tests := []struct {
		login  string
		status int
	}{
		{"eve", 422},    // no collaborator
		{BotLogin, 422}, // the pull request's author
		{"alice", 201},  // a writer
		{"alice", 201},  // again: still one request
	}
	for _, tt := range tests {
		r := do(t, s, "POST", path, map[string]any{"reviewers": []string{tt.login}})
		if r.status != tt.status {
			t.Errorf("request review from %s: status %d %s, want %d", tt.login, r.status, r.body, tt.status)
		}
	}
	if diff := cmp.Diff([]string{"alice"}, s.RequestedReviewers(pr)); diff != "" {
		t.Errorf("requested reviewers (-want +got):\n%s", diff)
	}
	s.AddReview(pr, "alice", "APPROVED", "")
	if got := s.RequestedReviewers(pr); len(got) != 0 {
		t.Errorf("requested reviewers after alice's review = %v, want none", got)
	}
}

func TestPushCommit(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	before := pushBranch(t, s, "ralph/1-feature")
	sha := s.PushCommit("ralph/1-feature", "mona", "fix typo", map[string]string{"docs/a.md": "hello\n"})
	if got := s.branchSHA("ralph/1-feature"); got != sha {
		t.Fatalf("branch at %s, want %s", got, sha)
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		t.Fatal(err)
	}
	if gc.author.name != "mona" || gc.committer.name != "mona" || len(gc.parents) != 1 || gc.parents[0] != before {
		t.Errorf("commit %+v: want mona's, on %s", gc, before)
	}
	if out, err := s.git(nil, "show", sha+":docs/a.md"); err != nil || out != "hello" {
		t.Errorf("docs/a.md = %q, %v", out, err)
	}
}
