package ghapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// limited is a client of a test server whose answers fault gives (n counts the requests that reached it),
// with instant waits that it records.
func limited(t *testing.T, retry ghapi.Retry, fault func(w http.ResponseWriter, r *http.Request, n int) bool) (c *ghapi.Client, hits func() int, waits func() []time.Duration) {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{})
	var (
		mu     sync.Mutex
		n      int
		waited []time.Duration
	)
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		return fault(w, r, k)
	})
	retry.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waited = append(waited, d)
		mu.Unlock()
		return ctx.Err()
	}
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport, Retry: retry,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() int { mu.Lock(); defer mu.Unlock(); return n }, func() []time.Duration { mu.Lock(); defer mu.Unlock(); return append([]time.Duration(nil), waited...) }
}

// A secondary limit that lasts (GitHub refusing again and again, as when many runners retry together) is
// waited out as long as GitHub asks: the dispatch that carries an issue forward is not given up after a
// few tries.
func TestLastingSecondaryLimit(t *testing.T) {
	t.Parallel()
	retry := ghapi.DefaultRetry
	c, hits, waits := limited(t, retry, first(9, status(403, map[string]string{"Retry-After": "60"}, "You have exceeded a secondary rate limit.")))
	if _, err := c.DispatchWorkflow(context.Background(), "ralph.yml", "main", map[string]string{"issue": "1"}); err != nil {
		t.Fatalf("DispatchWorkflow: %v", err)
	}
	if got := hits(); got != 10 {
		t.Errorf("%d requests reached the server, want 10 (9 refused, then the dispatch)", got)
	}
	for i, w := range waits() {
		if w != time.Minute {
			t.Errorf("wait %d = %v, want the minute GitHub asked for", i+1, w)
		}
	}
}

// The primary limit resetting beyond a minute is waited for, within LimitWait.
func TestPrimaryResetBeyondAMinute(t *testing.T) {
	t.Parallel()
	c, hits, waits := limited(t, ghapi.DefaultRetry, first(1, func(w http.ResponseWriter, r *http.Request, n int) bool {
		reset := time.Now().Add(20 * time.Minute).Unix()
		return status(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": fmt.Sprint(reset)}, "API rate limit exceeded")(w, r, n)
	}))
	if _, err := c.Repository(context.Background()); err != nil {
		t.Fatalf("Repository: %v", err)
	}
	if got := hits(); got != 2 {
		t.Errorf("%d requests reached the server, want 2", got)
	}
	if w := waits(); len(w) != 1 || w[0] < 19*time.Minute || w[0] > 21*time.Minute {
		t.Errorf("waits %v, want one of about 20 minutes", w)
	}
}

// A wait longer than ralph's bound is not waited for, and no request of the client goes out inside the
// refusal's window afterwards: it fails at once with a LimitError that says until when.
func TestNoRequestInsideARefusalsWindow(t *testing.T) {
	t.Parallel()
	retry := ghapi.DefaultRetry
	retry.Limits = 10 * time.Second
	c, hits, _ := limited(t, retry, status(403, map[string]string{"Retry-After": "30"}, "You have exceeded a secondary rate limit."))
	ctx := context.Background()
	if _, err := c.Repository(ctx); err == nil {
		t.Fatal("Repository: no error, want the refusal")
	}
	if got := hits(); got != 1 {
		t.Fatalf("%d requests reached the server, want 1", got)
	}
	_, err := c.CreateComment(ctx, 1, "hello")
	var le *ghapi.LimitError
	if !errors.As(err, &le) || time.Until(le.Until) < 20*time.Second {
		t.Errorf("CreateComment inside the window: %v, want a LimitError until about 30s from now", err)
	}
	if got := hits(); got != 1 {
		t.Errorf("%d requests reached the server, want still 1: the second went out inside the window", got)
	}
}

// While one request waits out a refusal, the client's other requests wait too instead of being refused.
func TestRefusalHoldsTheWholeClient(t *testing.T) {
	t.Parallel()
	var refusedAt time.Time
	var mu sync.Mutex
	c, hits, waits := limited(t, ghapi.DefaultRetry, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 1 {
			mu.Lock()
			refusedAt = time.Now()
			mu.Unlock()
			return status(403, map[string]string{"Retry-After": "30"}, "You have exceeded a secondary rate limit.")(w, r, n)
		}
		return false
	})
	ctx := context.Background()
	if _, err := c.Repository(ctx); err != nil {
		t.Fatal(err)
	}
	// The instant test sleep did not wait the 30 seconds: the window is still open, and a second
	// request waits out what is left of it before it goes out.
	if _, err := c.Repository(ctx); err != nil {
		t.Fatal(err)
	}
	w := waits()
	mu.Lock()
	left := 30*time.Second - time.Since(refusedAt)
	mu.Unlock()
	if len(w) != 2 || w[0] != 30*time.Second || w[1] < left-time.Second || w[1] > 30*time.Second {
		t.Errorf("waits %v, want 30s and then what was left of the window (about %v)", w, left)
	}
	if got := hits(); got != 3 {
		t.Errorf("%d requests reached the server, want 3", got)
	}
}
