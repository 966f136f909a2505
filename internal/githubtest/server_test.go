package githubtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/go-cmp/cmp"
)

// responseSpec is GitHub's description read as a check of this server's responses:
// the fields it sends must be named and typed as GitHub documents them (no unknown
// property, no wrong type). Required fields are not enforced: the server sends the
// fields ralph reads, not all of GitHub's.
var responseSpec = sync.OnceValues(func() (*spec, error) {
	return newSpec(func(doc *openapi3.T) {
		seen := map[*openapi3.Schema]bool{}
		for _, s := range doc.Components.Schemas {
			relax(s, seen)
		}
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				for _, r := range op.Responses.Map() {
					if r.Value != nil {
						for _, mt := range r.Value.Content {
							relax(mt.Schema, seen)
						}
					}
				}
			}
		}
	})
})

func relax(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	s.Required = nil
	// Closing each member of an allOf would refuse the others' properties: merge the
	// members' properties into the schema instead.
	for _, m := range s.AllOf {
		if m.Value == nil || len(m.Value.AllOf) > 0 || len(m.Value.OneOf) > 0 || len(m.Value.AnyOf) > 0 {
			return
		}
	}
	if len(s.AllOf) > 0 {
		merged := openapi3.Schemas{}
		for _, m := range s.AllOf {
			for k, p := range m.Value.Properties {
				merged[k] = p
			}
		}
		for k, p := range s.Properties {
			merged[k] = p
		}
		s.Properties, s.AllOf, s.Type = merged, nil, &openapi3.Types{"object"}
	}
	if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		closed := false
		s.AdditionalProperties.Has = &closed
	}
	for _, p := range s.Properties {
		relax(p, seen)
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, x := range list {
			relax(x, seen)
		}
	}
	relax(s.Items, seen)
	relax(s.AdditionalProperties.Schema, seen)
}

// newServer starts a server whose every 2xx response is checked against GitHub's
// response schemas.
func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	rs, err := responseSpec()
	if err != nil {
		t.Fatal(err)
	}
	s := New(t, opts)
	s.mu.Lock()
	s.checkResponse = func(path string, r *http.Request, status int, header http.Header, body []byte) {
		if status >= 300 {
			return
		}
		opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
		opts.WithCustomSchemaErrorFunc(schemaMessage)
		route, params, err := rs.route(r.Method, path)
		if err != nil {
			t.Errorf("response check: %s %s: %v", r.Method, path, err)
			return
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
			Status:                 status,
			Header:                 header,
			Body:                   io.NopCloser(bytes.NewReader(body)),
			Options:                opts,
		}
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			t.Errorf("response to %s %s does not match GitHub's schema: %s", r.Method, path, validationMessage(err))
		}
	}
	s.mu.Unlock()
	return s
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request to the API with the server's token; body is sent as is when
// it is a string, else as JSON.
func do(t *testing.T, s *Server, method, path string, body any) response {
	t.Helper()
	return doAuth(t, s, method, path, body, "token test-token")
}

func doAuth(t *testing.T, s *Server, method, path string, body any, auth string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

func want(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

type ghUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type ghLabel struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

type ghIssue struct {
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        *string   `json:"body"`
	State       string    `json:"state"`
	StateReason *string   `json:"state_reason"`
	Labels      []ghLabel `json:"labels"`
	User        ghUser    `json:"user"`
	HTMLURL     string    `json:"html_url"`
	Comments    int       `json:"comments"`
	PullRequest *struct {
		HTMLURL string `json:"html_url"`
	} `json:"pull_request"`
}

func ptr[T any](v T) *T { return &v }

func TestRejectsWhatGitHubRejects(t *testing.T) {
	s := newServer(t, Options{})
	s.CreateIssue("alice", "first", "")
	tests := []struct {
		name         string
		method, path string
		body         any
		status       int
		message      string // a part of the message
	}{
		{"misspelled required body field", "POST", "/repos/octo/demo/issues/1/comments", `{"bodyy":"x"}`, 422, `property "body" is missing`},
		{"unknown body field beside the required one", "POST", "/repos/octo/demo/issues/1/comments", `{"body":"x","bdy":"y"}`, 422, `body property "/bdy"`},
		{"misspelled optional body field", "PATCH", "/repos/octo/demo/issues/1", `{"tittle":"x"}`, 422, `body property "/tittle"`},
		{"missing required field", "POST", "/repos/octo/demo/git/refs", `{"ref":"refs/heads/x"}`, 422, `property "sha" is missing`},
		{"wrong body type", "POST", "/repos/octo/demo/issues", `{"title":"x","labels":"bug"}`, 422, "labels"},
		{"labels set to an empty list", "PUT", "/repos/octo/demo/issues/1/labels", `{"labels":[]}`, 422, "minimum number of items is 1"},
		{"wrong method", "PUT", "/repos/octo/demo/issues", `{"title":"x"}`, 404, "no PUT operation"},
		{"unknown path", "GET", "/repos/octo/demo/isues", nil, 404, "GitHub's REST API has no operation GET /repos/octo/demo/isues"},
		{"path trimmed from the description", "GET", "/orgs/octo/teams", nil, 404, "trimmed"},
		{"bad enum in query", "GET", "/repos/octo/demo/issues?state=bogus", nil, 422, `parameter "state" in query`},
		{"unknown query parameter", "GET", "/repos/octo/demo/issues?label=bug", nil, 422, `query parameter "label"`},
		{"path parameter not a number", "GET", "/repos/octo/demo/issues/abc", nil, 422, `parameter "issue_number" in path`},
		{"body where none is allowed", "GET", "/repos/octo/demo/issues/1", `{"a":1}`, 422, "body not allowed"},
		{"malformed JSON", "POST", "/repos/octo/demo/issues/1/comments", `{"body":`, 400, "Problems parsing JSON"},
		{"parameter GitHub has and the server does not implement", "GET", "/repos/octo/demo/issues?creator=alice", nil, 501, `query parameter "creator"`},
		{"operation GitHub has and the server does not implement", "GET", "/repos/octo/demo/pulls/1/files", nil, 501, "does not implement GET /repos/{owner}/{repo}/pulls/{pull_number}/files"},
		{"another repository", "GET", "/repos/someone/else/issues", nil, 404, "Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, s, tt.method, tt.path, tt.body)
			msg := decode[struct{ Message string }](t, r).Message
			if r.status != tt.status || !strings.Contains(msg, tt.message) {
				t.Errorf("%s %s: got %d %q, want %d with %q", tt.method, tt.path, r.status, msg, tt.status, tt.message)
			}
		})
	}
	if got := s.Comments(1); len(got) != 0 {
		t.Errorf("rejected requests changed the issue: comments %v", got)
	}
}

func TestHandlersServeGitHubOperations(t *testing.T) {
	s := New(t, Options{})
	for route := range s.handlers {
		method, path, _ := strings.Cut(route, " ")
		item := s.spec.doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("handler for %s: GitHub's description has no such operation", route)
		}
	}
}

func TestAuth(t *testing.T) {
	s := newServer(t, Options{Token: "sekret"})
	tests := []struct {
		auth   string
		status int
	}{
		{"", 401},
		{"token wrong", 401},
		{"sekret", 401},
		{"token sekret", 200},
		{"Bearer sekret", 200},
	}
	for _, tt := range tests {
		r := doAuth(t, s, "GET", "/repos/octo/demo", nil, tt.auth)
		if r.status != tt.status {
			t.Errorf("Authorization %q: status %d, want %d", tt.auth, r.status, tt.status)
		}
		if tt.status == 401 {
			if got := decode[struct{ Message string }](t, r).Message; got != "Bad credentials" {
				t.Errorf("Authorization %q: message %q", tt.auth, got)
			}
		}
	}
}

func TestRepository(t *testing.T) {
	s := newServer(t, Options{DefaultBranch: "trunk"})
	r := do(t, s, "GET", "/repos/octo/demo", nil)
	want(t, r, 200)
	type repo struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
		HTMLURL       string `json:"html_url"`
		Private       bool   `json:"private"`
	}
	got := decode[repo](t, r)
	if diff := cmp.Diff(repo{"octo/demo", "trunk", s.ServerURL + "/octo/demo", false}, got); diff != "" {
		t.Errorf("repository (-want +got):\n%s", diff)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.header.Get("X-RateLimit-Remaining") == "" {
		t.Error("no X-RateLimit-Remaining header")
	}
}

func TestIssues(t *testing.T) {
	s := newServer(t, Options{})
	s.CreateIssue("alice", "old", "the body", "bug")
	r := do(t, s, "POST", "/repos/octo/demo/issues", map[string]any{"title": "new", "labels": []string{"bug", "ralph:build"}})
	want(t, r, 201)
	created := decode[ghIssue](t, r)
	if created.Number != 2 || created.User.Login != BotLogin || created.User.Type != "Bot" {
		t.Errorf("created issue %+v", created)
	}

	r = do(t, s, "GET", "/repos/octo/demo/issues/1", nil)
	want(t, r, 200)
	wantIssue := ghIssue{Number: 1, Title: "old", Body: ptr("the body"), State: "open",
		Labels: []ghLabel{{"bug", "ededed"}}, User: ghUser{"alice", "User"}, HTMLURL: s.ServerURL + "/octo/demo/issues/1"}
	if diff := cmp.Diff(wantIssue, decode[ghIssue](t, r)); diff != "" {
		t.Errorf("issue 1 (-want +got):\n%s", diff)
	}

	r = do(t, s, "PATCH", "/repos/octo/demo/issues/1", map[string]any{"state": "closed", "state_reason": "not_planned", "title": "old!"})
	want(t, r, 200)
	if got, want := s.Issue(1), (Issue{Number: 1, Title: "old!", Body: "the body", Author: "alice", State: "closed",
		StateReason: "not_planned", Labels: []string{"bug"}}); !cmp.Equal(got, want) {
		t.Errorf("issue after PATCH: %s", cmp.Diff(want, got))
	}
	if r := do(t, s, "GET", "/repos/octo/demo/issues/99", nil); r.status != 404 {
		t.Errorf("missing issue: status %d", r.status)
	}

	tests := []struct {
		query string
		want  []int
	}{
		{"", []int{2}},
		{"?state=all", []int{2, 1}},
		{"?state=all&direction=asc", []int{1, 2}},
		{"?state=all&labels=bug", []int{2, 1}},
		{"?state=all&labels=bug,ralph:build", []int{2}},
		{"?state=closed", []int{1}},
	}
	for _, tt := range tests {
		r := do(t, s, "GET", "/repos/octo/demo/issues"+tt.query, nil)
		want(t, r, 200)
		var got []int
		for _, is := range decode[[]ghIssue](t, r) {
			got = append(got, is.Number)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("list %q (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestPagination(t *testing.T) {
	s := newServer(t, Options{})
	for i := range 5 {
		s.CreateIssue("alice", fmt.Sprint("issue ", i+1), "")
	}
	r := do(t, s, "GET", "/repos/octo/demo/issues?per_page=2&page=2&direction=asc", nil)
	want(t, r, 200)
	var got []int
	for _, is := range decode[[]ghIssue](t, r) {
		got = append(got, is.Number)
	}
	if diff := cmp.Diff([]int{3, 4}, got); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	base := s.URL + "/repos/octo/demo/issues?direction=asc&"
	wantLink := fmt.Sprintf(`<%spage=3&per_page=2>; rel="next", <%spage=3&per_page=2>; rel="last", <%spage=1&per_page=2>; rel="first", <%spage=1&per_page=2>; rel="prev"`,
		base, base, base, base)
	if diff := cmp.Diff(wantLink, r.header.Get("Link")); diff != "" {
		t.Errorf("Link (-want +got):\n%s", diff)
	}
	last := do(t, s, "GET", "/repos/octo/demo/issues?per_page=2&page=3", nil)
	if l := last.header.Get("Link"); strings.Contains(l, `rel="next"`) {
		t.Errorf("last page has a next link: %s", l)
	}
}

type ghEvent struct {
	Event string  `json:"event"`
	Actor ghUser  `json:"actor"`
	Label ghLabel `json:"label"`
}

func TestLabels(t *testing.T) {
	s := newServer(t, Options{})
	n := s.CreateIssue("alice", "t", "")
	s.AddLabel(n, "ralph:build", "alice")

	want(t, do(t, s, "POST", "/repos/octo/demo/labels", map[string]any{"name": "ralph:done", "color": "0e8a16", "description": "done"}), 201)
	if r := do(t, s, "POST", "/repos/octo/demo/labels", map[string]any{"name": "Ralph:Done"}); r.status != 422 || !strings.Contains(string(r.body), "already_exists") {
		t.Errorf("duplicate label: %d %s", r.status, r.body)
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/labels/ralph:done", nil), 200)
	want(t, do(t, s, "GET", "/repos/octo/demo/labels/nope", nil), 404)

	r := do(t, s, "POST", "/repos/octo/demo/issues/1/labels", map[string]any{"labels": []string{"ralph:research-needed"}})
	want(t, r, 200)
	if diff := cmp.Diff([]ghLabel{{"ralph:build", "ededed"}, {"ralph:research-needed", "ededed"}}, decode[[]ghLabel](t, r)); diff != "" {
		t.Errorf("labels after add (-want +got):\n%s", diff)
	}
	want(t, do(t, s, "DELETE", "/repos/octo/demo/issues/1/labels/ralph:research-needed", nil), 200)
	if r := do(t, s, "DELETE", "/repos/octo/demo/issues/1/labels/ralph:research-needed", nil); r.status != 404 {
		t.Errorf("removing a label the issue lacks: status %d, want 404", r.status)
	}
	want(t, do(t, s, "PUT", "/repos/octo/demo/issues/1/labels", map[string]any{"labels": []string{"ralph:build", "ralph:done"}}), 200)
	if diff := cmp.Diff([]string{"ralph:build", "ralph:done"}, s.Labels(n)); diff != "" {
		t.Errorf("labels after PUT (-want +got):\n%s", diff)
	}
	s.RemoveLabel(n, "ralph:done", "bob")

	r = do(t, s, "GET", "/repos/octo/demo/issues/1/events", nil)
	want(t, r, 200)
	bot := ghUser{BotLogin, "Bot"}
	wantEvents := []ghEvent{
		{"labeled", ghUser{"alice", "User"}, ghLabel{"ralph:build", "ededed"}},
		{"labeled", bot, ghLabel{"ralph:research-needed", "ededed"}},
		{"unlabeled", bot, ghLabel{"ralph:research-needed", "ededed"}},
		{"labeled", bot, ghLabel{"ralph:done", "0e8a16"}},
		{"unlabeled", ghUser{"bob", "User"}, ghLabel{"ralph:done", "0e8a16"}},
	}
	if diff := cmp.Diff(wantEvents, decode[[]ghEvent](t, r)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	want(t, do(t, s, "DELETE", "/repos/octo/demo/issues/1/labels", nil), 204)
	if got := s.Labels(n); len(got) != 0 {
		t.Errorf("labels after DELETE all: %v", got)
	}
}

func TestComments(t *testing.T) {
	s := newServer(t, Options{})
	n := s.CreateIssue("alice", "t", "")
	first := s.AddComment(n, "alice", "/ralph approve")
	r := do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "<!-- ralph:status -->"})
	want(t, r, 201)
	type ghComment struct {
		ID      int64  `json:"id"`
		Body    string `json:"body"`
		User    ghUser `json:"user"`
		HTMLURL string `json:"html_url"`
	}
	c := decode[ghComment](t, r)
	if c.User.Login != BotLogin || !strings.HasPrefix(c.HTMLURL, s.ServerURL+"/octo/demo/issues/1#issuecomment-") {
		t.Errorf("created comment %+v", c)
	}
	id := fmt.Sprint(c.ID)
	want(t, do(t, s, "PATCH", "/repos/octo/demo/issues/comments/"+id, map[string]any{"body": "edited"}), 200)
	r = do(t, s, "GET", "/repos/octo/demo/issues/1/comments?per_page=1&page=2", nil)
	want(t, r, 200)
	if diff := cmp.Diff([]ghComment{{c.ID, "edited", ghUser{BotLogin, "Bot"}, c.HTMLURL}}, decode[[]ghComment](t, r)); diff != "" {
		t.Errorf("page 2 of comments (-want +got):\n%s", diff)
	}
	if got := decode[ghIssue](t, do(t, s, "GET", "/repos/octo/demo/issues/1", nil)).Comments; got != 2 {
		t.Errorf("comments count %d, want 2", got)
	}
	want(t, do(t, s, "DELETE", "/repos/octo/demo/issues/comments/"+id, nil), 204)
	want(t, do(t, s, "GET", "/repos/octo/demo/issues/comments/"+id, nil), 404)
	got := s.Comments(n)
	if len(got) != 1 || got[0].ID != first.ID || got[0].Body != "/ralph approve" || got[0].User != "alice" {
		t.Errorf("comments after delete: %+v", got)
	}
}

// TestTokenLogin: what the token writes is written as the token's account.
func TestTokenLogin(t *testing.T) {
	s := newServer(t, Options{TokenLogin: "ralph-app[bot]"})
	s.CreateIssue("alice", "t", "")
	r := do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "hi"})
	want(t, r, 201)
	if got := decode[struct{ User ghUser }](t, r).User; got != (ghUser{"ralph-app[bot]", "Bot"}) {
		t.Errorf("comment by %+v", got)
	}
	want(t, do(t, s, "POST", "/repos/octo/demo/issues/1/labels", map[string]any{"labels": []string{"x"}}), 200)
	events := decode[[]struct{ Actor ghUser }](t, do(t, s, "GET", "/repos/octo/demo/issues/1/events", nil))
	if len(events) != 1 || events[0].Actor.Login != "ralph-app[bot]" {
		t.Errorf("label events %+v", events)
	}
}

// pushBranch makes a commit on top of the default branch through the API and points
// a new branch at it.
func pushBranch(t *testing.T, s *Server, branch string) string {
	t.Helper()
	main := decode[struct{ Object struct{ SHA string } }](t, do(t, s, "GET", "/repos/octo/demo/git/ref/heads/main", nil)).Object.SHA
	tree := decode[struct{ Tree struct{ SHA string } }](t, do(t, s, "GET", "/repos/octo/demo/git/commits/"+main, nil)).Tree.SHA
	r := do(t, s, "POST", "/repos/octo/demo/git/commits", map[string]any{"message": "work on " + branch, "tree": tree, "parents": []string{main}})
	want(t, r, 201)
	sha := decode[struct{ SHA string }](t, r).SHA
	want(t, do(t, s, "POST", "/repos/octo/demo/git/refs", map[string]any{"ref": "refs/heads/" + branch, "sha": sha}), 201)
	return sha
}

func TestPulls(t *testing.T) {
	s := newServer(t, Options{})
	issue := s.CreateIssue("alice", "feature", "")
	other := s.CreateIssue("alice", "unrelated", "")
	head := pushBranch(t, s, "ralph/1-feature")

	r := do(t, s, "POST", "/repos/octo/demo/pulls", map[string]any{"title": "feature (#1)", "head": "ralph/1-feature", "base": "main",
		"body": "Summary.\n\nCloses #1", "draft": true})
	want(t, r, 201)
	type ghPull struct {
		Number  int    `json:"number"`
		State   string `json:"state"`
		Draft   bool   `json:"draft"`
		HTMLURL string `json:"html_url"`
		Head    struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"head"`
	}
	p := decode[ghPull](t, r)
	if p.Number != 3 || p.State != "open" || !p.Draft || p.Head.Ref != "ralph/1-feature" || p.Head.SHA != head ||
		p.HTMLURL != s.ServerURL+"/octo/demo/pull/3" {
		t.Errorf("created pull %+v", p)
	}

	rejected := []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"open pull for the same head", map[string]any{"title": "again", "head": "octo:ralph/1-feature", "base": "main"}, "A pull request already exists"},
		{"unknown head", map[string]any{"title": "x", "head": "nope", "base": "main"}, `"field":"head"`},
		{"unknown base", map[string]any{"title": "x", "head": "ralph/1-feature", "base": "nope"}, `"field":"base"`},
		{"no commits", map[string]any{"title": "x", "head": "main", "base": "main"}, "No commits between"},
	}
	for _, tt := range rejected {
		r := do(t, s, "POST", "/repos/octo/demo/pulls", tt.body)
		if r.status != 422 || !strings.Contains(string(r.body), tt.msg) || !strings.Contains(string(r.body), "Validation Failed") {
			t.Errorf("%s: %d %s", tt.name, r.status, r.body)
		}
	}

	for query, wantN := range map[string]int{"?head=octo:ralph/1-feature": 1, "?head=octo:other": 0, "?base=main": 1, "?state=closed": 0} {
		if got := len(decode[[]ghPull](t, do(t, s, "GET", "/repos/octo/demo/pulls"+query, nil))); got != wantN {
			t.Errorf("pulls%s: %d, want %d", query, got, wantN)
		}
	}
	if is := decode[ghIssue](t, do(t, s, "GET", "/repos/octo/demo/issues/3", nil)); is.PullRequest == nil {
		t.Error("the pull request seen as an issue has no pull_request field")
	}
	if is := decode[ghIssue](t, do(t, s, "GET", "/repos/octo/demo/issues/1", nil)); is.PullRequest != nil {
		t.Error("a plain issue has a pull_request field")
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/pulls/1", nil), 404)

	s.MergePull(p.Number)
	got := decode[struct {
		State  string `json:"state"`
		Merged bool   `json:"merged"`
	}](t, do(t, s, "GET", "/repos/octo/demo/pulls/3", nil))
	if got.State != "closed" || !got.Merged {
		t.Errorf("merged pull: %+v", got)
	}
	if is := s.Issue(issue); is.State != "closed" || is.StateReason != "completed" {
		t.Errorf("issue closed by the merge: %+v", is)
	}
	if is := s.Issue(other); is.State != "open" {
		t.Errorf("unrelated issue: %+v", is)
	}

	pushBranch(t, s, "ralph/2-other")
	r = do(t, s, "POST", "/repos/octo/demo/pulls", map[string]any{"title": "other", "head": "ralph/2-other", "base": "main", "body": "Closes #2"})
	want(t, r, 201)
	second := decode[ghPull](t, r).Number
	s.ClosePull(second)
	if diff := cmp.Diff([]Pull{
		{Number: 3, Title: "feature (#1)", Body: "Summary.\n\nCloses #1", Head: "ralph/1-feature", Base: "main", State: "closed", Draft: true, Merged: true, HeadSHA: head, Author: BotLogin},
		{Number: second, Title: "other", Body: "Closes #2", Head: "ralph/2-other", Base: "main", State: "closed", HeadSHA: s.Pulls()[1].HeadSHA, Author: BotLogin},
	}, s.Pulls()); diff != "" {
		t.Errorf("Pulls (-want +got):\n%s", diff)
	}
	if is := s.Issue(other); is.State != "open" {
		t.Errorf("issue named by a pull closed unmerged was closed: %+v", is)
	}
}

type ghRef struct {
	Ref    string `json:"ref"`
	Object struct {
		Type string `json:"type"`
		SHA  string `json:"sha"`
	} `json:"object"`
}

func TestGitRefs(t *testing.T) {
	s := newServer(t, Options{})
	main := decode[ghRef](t, do(t, s, "GET", "/repos/octo/demo/git/ref/heads/main", nil)).Object.SHA
	if !isSHA(main) {
		t.Fatalf("main at %q", main)
	}
	work := pushBranch(t, s, "ralph/47-x")

	for _, path := range []string{"/repos/octo/demo/git/ref/heads/ralph/47-x", "/repos/octo/demo/git/ref/heads%2Fralph%2F47-x"} {
		r := do(t, s, "GET", path, nil)
		want(t, r, 200)
		got := decode[ghRef](t, r)
		if got.Ref != "refs/heads/ralph/47-x" || got.Object.SHA != work || got.Object.Type != "commit" {
			t.Errorf("GET %s: %+v", path, got)
		}
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/git/ref/heads/nope", nil), 404)
	r := do(t, s, "GET", "/repos/octo/demo/git/matching-refs/heads/ralph/", nil)
	want(t, r, 200)
	if refs := decode[[]ghRef](t, r); len(refs) != 1 || refs[0].Ref != "refs/heads/ralph/47-x" {
		t.Errorf("matching refs: %+v", refs)
	}

	lock := "/repos/octo/demo/git/refs/ralph/locks/47"
	want(t, do(t, s, "POST", "/repos/octo/demo/git/refs", map[string]any{"ref": "refs/ralph/locks/47", "sha": main}), 201)
	if r := do(t, s, "POST", "/repos/octo/demo/git/refs", map[string]any{"ref": "refs/ralph/locks/47", "sha": main}); r.status != 422 ||
		!strings.Contains(string(r.body), "Reference already exists") {
		t.Errorf("creating an existing ref: %d %s", r.status, r.body)
	}
	if r := do(t, s, "POST", "/repos/octo/demo/git/refs", map[string]any{"ref": "refs/x/y", "sha": strings.Repeat("a", 40)}); r.status != 422 {
		t.Errorf("ref to a missing object: %d %s", r.status, r.body)
	}
	want(t, do(t, s, "PATCH", lock, map[string]any{"sha": work}), 200)
	if r := do(t, s, "PATCH", lock, map[string]any{"sha": main}); r.status != 422 || !strings.Contains(string(r.body), "not a fast forward") {
		t.Errorf("non-fast-forward update: %d %s", r.status, r.body)
	}
	want(t, do(t, s, "PATCH", lock, map[string]any{"sha": main, "force": true}), 200)
	if got := decode[ghRef](t, do(t, s, "GET", "/repos/octo/demo/git/ref/ralph/locks/47", nil)).Object.SHA; got != main {
		t.Errorf("lock at %s after forced update, want %s", got, main)
	}
	want(t, do(t, s, "DELETE", lock, nil), 204)
	want(t, do(t, s, "GET", "/repos/octo/demo/git/ref/ralph/locks/47", nil), 404)
	want(t, do(t, s, "DELETE", lock, nil), 422)

	type branch struct {
		Name   string `json:"name"`
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	if got := decode[branch](t, do(t, s, "GET", "/repos/octo/demo/branches/ralph/47-x", nil)); got.Name != "ralph/47-x" || got.Commit.SHA != work {
		t.Errorf("branch: %+v", got)
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/branches/nope", nil), 404)
	type commit struct {
		SHA    string `json:"sha"`
		Commit struct {
			Message string `json:"message"`
		} `json:"commit"`
	}
	for _, ref := range []string{"ralph/47-x", "heads/ralph/47-x", work} {
		if got := decode[commit](t, do(t, s, "GET", "/repos/octo/demo/commits/"+ref, nil)); got.SHA != work || got.Commit.Message != "work on ralph/47-x" {
			t.Errorf("commit %s: %+v", ref, got)
		}
	}
}

func TestCreateRefIsAtomic(t *testing.T) {
	s := newServer(t, Options{})
	main := decode[ghRef](t, do(t, s, "GET", "/repos/octo/demo/git/ref/heads/main", nil)).Object.SHA
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = do(t, s, "POST", "/repos/octo/demo/git/refs", map[string]any{"ref": "refs/ralph/locks/7", "sha": main}).status
		})
	}
	wg.Wait()
	created, refused := 0, 0
	for _, st := range statuses {
		switch st {
		case 201:
			created++
		case 422:
			refused++
		}
	}
	if created != 1 || refused != n-1 {
		t.Errorf("concurrent creators: statuses %v, want one 201 and %d 422", statuses, n-1)
	}
}

func TestBlobsAndCommits(t *testing.T) {
	s := newServer(t, Options{})
	r := do(t, s, "POST", "/repos/octo/demo/git/blobs", map[string]any{"content": "holder: run 42\n", "encoding": "utf-8"})
	want(t, r, 201)
	blob := decode[struct{ SHA string }](t, r).SHA
	got := decode[struct{ Content, Encoding string }](t, do(t, s, "GET", "/repos/octo/demo/git/blobs/"+blob, nil))
	if got.Encoding != "base64" || got.Content != "aG9sZGVyOiBydW4gNDIK\n" {
		t.Errorf("blob: %+v", got)
	}

	const empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	r = do(t, s, "POST", "/repos/octo/demo/git/commits", map[string]any{
		"message": "lock #47 held by run 42", "tree": empty,
		"author": map[string]any{"name": "ralph", "email": "ralph@example.com", "date": "2025-01-02T03:04:05Z"}})
	want(t, r, 201)
	type gitCommitJSON struct {
		SHA     string `json:"sha"`
		Message string `json:"message"`
		Author  struct {
			Name string `json:"name"`
			Date string `json:"date"`
		} `json:"author"`
		Parents []any `json:"parents"`
	}
	created := decode[gitCommitJSON](t, r)
	read := decode[gitCommitJSON](t, do(t, s, "GET", "/repos/octo/demo/git/commits/"+created.SHA, nil))
	if diff := cmp.Diff(created, read); diff != "" {
		t.Errorf("commit read back (-created +read):\n%s", diff)
	}
	if read.Message != "lock #47 held by run 42" || read.Author.Name != "ralph" || read.Author.Date != "2025-01-02T03:04:05Z" || len(read.Parents) != 0 {
		t.Errorf("commit: %+v", read)
	}
	if r := do(t, s, "POST", "/repos/octo/demo/git/commits", map[string]any{"message": "m", "tree": strings.Repeat("1", 40)}); r.status != 422 {
		t.Errorf("commit of a missing tree: %d %s", r.status, r.body)
	}
	if out, err := gitCommand(s.BareRepo, nil, "cat-file", "-t", created.SHA).Output(); err != nil || strings.TrimSpace(string(out)) != "commit" {
		t.Errorf("commit not in the bare repository: %q %v", out, err)
	}
}

func TestPermission(t *testing.T) {
	s := newServer(t, Options{})
	s.SetPermission("maria", "maintain")
	s.SetPermission("tess", "triage")
	s.CreateIssue("mallory", "t", "")
	type perm struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
		User       struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	tests := []struct {
		user   string
		status int
		want   perm
	}{
		{"maria", 200, perm{"write", "maintain", struct {
			Login string `json:"login"`
		}{"maria"}}},
		{"tess", 200, perm{"read", "triage", struct {
			Login string `json:"login"`
		}{"tess"}}},
		{"mallory", 200, perm{"none", "none", struct {
			Login string `json:"login"`
		}{"mallory"}}},
		{"ghost", 404, perm{}},
	}
	for _, tt := range tests {
		r := do(t, s, "GET", "/repos/octo/demo/collaborators/"+tt.user+"/permission", nil)
		if r.status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.user, r.status, tt.status)
			continue
		}
		if tt.status == 200 {
			if diff := cmp.Diff(tt.want, decode[perm](t, r)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.user, diff)
			}
		}
	}
}

func TestActions(t *testing.T) {
	s := newServer(t, Options{})
	want(t, do(t, s, "POST", "/repos/octo/demo/actions/workflows/ralph.yml/dispatches",
		map[string]any{"ref": "main", "inputs": map[string]any{"issue": "47"}}), 204)
	if r := do(t, s, "POST", "/repos/octo/demo/actions/workflows/ralph.yml/dispatches", map[string]any{"ref": "nope"}); r.status != 422 {
		t.Errorf("dispatch on a missing ref: %d %s", r.status, r.body)
	}
	if r := do(t, s, "POST", "/repos/octo/demo/actions/workflows/ralph.yml/dispatches", map[string]any{"inputs": map[string]any{}}); r.status != 422 {
		t.Errorf("dispatch without ref: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff([]Dispatch{{Workflow: "ralph.yml", Ref: "main", Inputs: map[string]any{"issue": "47"}}}, s.Dispatches()); diff != "" {
		t.Errorf("dispatches (-want +got):\n%s", diff)
	}

	want(t, do(t, s, "GET", "/repos/octo/demo/actions/runs/77", nil), 404)
	s.SetWorkflowRun(77, "in_progress", "")
	type runJSON struct {
		Status     string  `json:"status"`
		Conclusion *string `json:"conclusion"`
		HTMLURL    string  `json:"html_url"`
	}
	if diff := cmp.Diff(runJSON{"in_progress", nil, s.ServerURL + "/octo/demo/actions/runs/77"},
		decode[runJSON](t, do(t, s, "GET", "/repos/octo/demo/actions/runs/77", nil))); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
	s.SetWorkflowRun(77, "completed", "success")
	if got := decode[runJSON](t, do(t, s, "GET", "/repos/octo/demo/actions/runs/77", nil)); got.Status != "completed" || got.Conclusion == nil || *got.Conclusion != "success" {
		t.Errorf("completed run: %+v", got)
	}
}

func TestUserAndRateLimit(t *testing.T) {
	s := newServer(t, Options{})
	if got := decode[ghUser](t, do(t, s, "GET", "/user", nil)); got != (ghUser{BotLogin, "Bot"}) {
		t.Errorf("user %+v", got)
	}
	r := do(t, s, "GET", "/rate_limit", nil)
	want(t, r, 200)
	if got := decode[struct{ Rate struct{ Limit int } }](t, r).Rate.Limit; got != 5000 {
		t.Errorf("rate limit %d", got)
	}
}

func TestEnterprisePrefix(t *testing.T) {
	s := newServer(t, Options{APIPrefix: "/api/v3", Owner: "acme", Repo: "tool"})
	if !strings.HasSuffix(s.URL, "/api/v3") || s.GraphQLURL != s.ServerURL+"/api/graphql" {
		t.Errorf("URL %s, GraphQLURL %s", s.URL, s.GraphQLURL)
	}
	n := s.CreateIssue("alice", "t", "")
	r := do(t, s, "GET", fmt.Sprintf("/repos/acme/tool/issues/%d", n), nil)
	want(t, r, 200)
	if got := decode[ghIssue](t, r).HTMLURL; got != s.ServerURL+"/acme/tool/issues/1" {
		t.Errorf("html_url %s", got)
	}
	req, _ := http.NewRequest("GET", s.ServerURL+"/repos/acme/tool/issues/1", nil)
	req.Header.Set("Authorization", "token test-token")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("API outside the prefix: status %d, want 404", resp.StatusCode)
	}
	req, _ = http.NewRequest("POST", s.GraphQLURL, strings.NewReader(`{"query":"{viewer{login}}"}`))
	req.Header.Set("Authorization", "bearer test-token")
	req.Header.Set("Authorization", "Bearer test-token")
	resp, err = s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"data":{"viewer":{"login":"github-actions[bot]"}}}`+"\n" {
		t.Errorf("GraphQL: status %d: %s", resp.StatusCode, body)
	}
	if diff := cmp.Diff([]Request{
		{Method: "GET", Path: "/repos/acme/tool/issues/1", Status: 200},
		{Method: "POST", Path: "/api/graphql", Status: 200, Operation: "query viewer"},
	}, s.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestTLS(t *testing.T) {
	s := newServer(t, Options{TLS: true})
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("URL %s", s.URL)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatalf("CACertPEM is not a PEM certificate: %q", s.CACertPEM())
	}
	get := func(c *http.Client) (int, error) {
		req, _ := http.NewRequest("GET", s.URL+"/rate_limit", nil)
		req.Header.Set("Authorization", "token test-token")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if st, err := get(trusting); err != nil || st != 200 {
		t.Errorf("with the CA: %d %v", st, err)
	}
	if _, err := get(&http.Client{Transport: &http.Transport{}}); err == nil {
		t.Error("a client without the CA trusted the server")
	}
	if New(t, Options{}).CACertPEM() != nil {
		t.Error("a plain HTTP server has a certificate")
	}
}

func TestInterceptAndRequests(t *testing.T) {
	s := newServer(t, Options{})
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != "POST" {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	want(t, do(t, s, "POST", "/repos/octo/demo/issues", map[string]any{"title": "x"}), 502)
	want(t, do(t, s, "GET", "/repos/octo/demo/issues", nil), 200)
	s.Intercept(nil)
	want(t, do(t, s, "POST", "/repos/octo/demo/issues", map[string]any{"title": "x"}), 201)
	if diff := cmp.Diff([]Request{
		{Method: "POST", Path: "/repos/octo/demo/issues", Status: 502},
		{Method: "GET", Path: "/repos/octo/demo/issues", Status: 200},
		{Method: "POST", Path: "/repos/octo/demo/issues", Status: 201},
	}, s.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestClockAndTimestamps(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	s := newServer(t, Options{Now: func() time.Time { return at }})
	s.CreateIssue("alice", "t", "")
	c := s.AddComment(1, "alice", "hi")
	if !c.CreatedAt.Equal(at.Truncate(time.Second)) {
		t.Errorf("comment created at %v", c.CreatedAt)
	}
	got := decode[struct {
		CreatedAt string `json:"created_at"`
	}](t, do(t, s, "GET", "/repos/octo/demo/issues/1", nil))
	if got.CreatedAt != "2025-03-04T05:06:07Z" {
		t.Errorf("created_at %s", got.CreatedAt)
	}
}

// TestCloseIssueAs: a person closes an issue with a closed issue's state_reason, which the REST API shows.
func TestCloseIssueAs(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	n := s.CreateIssue("alice", "not now", "")
	s.CloseIssueAs(n, "not_planned")
	r := do(t, s, "GET", fmt.Sprintf("/repos/octo/demo/issues/%d", n), nil)
	want(t, r, 200)
	if got := decode[ghIssue](t, r); got.State != "closed" || got.StateReason == nil || *got.StateReason != "not_planned" {
		t.Errorf("closed as not planned: state %q, reason %v", got.State, got.StateReason)
	}
}
