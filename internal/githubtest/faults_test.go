package githubtest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoseResponse(t *testing.T) {
	s := newServer(t, Options{})
	n := s.CreateIssue("octocat", "x", "")
	s.LoseResponse(func(method, path string, status int) bool {
		return method == "POST" && strings.HasSuffix(path, "/comments")
	})
	// The comment is created, but the client gets no answer: the connection is closed.
	req, err := http.NewRequest("POST", s.URL+"/repos/octo/demo/issues/1/comments", bytes.NewReader([]byte(`{"body":"hello"}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token test-token")
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the lost answer arrived: HTTP %d", resp.StatusCode)
	}
	if got := s.Comments(n); len(got) != 1 || got[0].Body != "hello" {
		t.Errorf("comments = %+v, want the one the lost request created", got)
	}
	// Other answers are held until the handler is done, then sent whole.
	r := do(t, s, "GET", "/repos/octo/demo/issues/1/comments", nil)
	want(t, r, 200)
	if !strings.Contains(string(r.body), `"body":"hello"`) || r.header.Get("X-RateLimit-Limit") != "5000" {
		t.Errorf("held answer: %s %v", r.body, r.header)
	}
	s.LoseResponse(nil)
	want(t, do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "again"}), 201)
	if diff := cmp.Diff([]Request{{Method: "POST", Path: "/repos/octo/demo/issues/1/comments", Status: 201}}, s.LostResponses()); diff != "" {
		t.Errorf("lost responses (-want +got):\n%s", diff)
	}
	if got := len(s.Requests()); got != 3 {
		t.Errorf("%d requests recorded, want 3 (a lost answer is still a request answered)", got)
	}
}

func TestReplaceResponse(t *testing.T) {
	s := newServer(t, Options{})
	n := s.CreateIssue("octocat", "x", "")
	s.ReplaceResponse(func(method, path string, status int) int {
		if method == "POST" && strings.HasSuffix(path, "/comments") {
			return http.StatusBadGateway
		}
		return 0
	})
	// The comment is created, but the client is told 502.
	want(t, do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "hello"}), 502)
	if got := s.Comments(n); len(got) != 1 || got[0].Body != "hello" {
		t.Errorf("comments = %+v, want the one the 502'd request created", got)
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/issues/1/comments", nil), 200)
	s.ReplaceResponse(nil)
	if diff := cmp.Diff([]Request{{Method: "POST", Path: "/repos/octo/demo/issues/1/comments", Status: 201}}, s.ReplacedResponses()); diff != "" {
		t.Errorf("replaced responses (-want +got):\n%s", diff)
	}
}
