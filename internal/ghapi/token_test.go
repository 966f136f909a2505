package ghapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// CheckToken refuses only a token GitHub refuses: an Enterprise server without rate limits answers
// /rate_limit with 404, and that token is fine.
func TestCheckToken(t *testing.T) {
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	if err := c.CheckToken(context.Background()); err != nil {
		t.Errorf("CheckToken with a good token: %v", err)
	}
	status := http.StatusNotFound
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/rate_limit" {
			return false
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"message":"refused"}`))
		return true
	})
	if err := c.CheckToken(context.Background()); err != nil {
		t.Errorf("CheckToken where rate limits are off (404): %v", err)
	}
	status = http.StatusUnauthorized
	if err := c.CheckToken(context.Background()); !ghapi.IsAuth(err) {
		t.Errorf("CheckToken with a refused token = %v, want an auth error", err)
	}
}
