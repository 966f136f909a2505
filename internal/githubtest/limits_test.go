package githubtest

import (
	"testing"
	"time"
)

// The secondary write limit refuses past its count with Retry-After until the window ends, and counts a
// request that comes inside that window; the primary limit refuses past its count with the reset.
func TestLimits(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	s.CreateIssue("octocat", "one", "")
	s.SetLimits(Limits{Writes: 2, Window: 30 * time.Second})
	for i := 0; i < 2; i++ {
		want(t, do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "hi"}), 201)
	}
	r := do(t, s, "POST", "/repos/octo/demo/issues/1/comments", map[string]any{"body": "hi"})
	want(t, r, 403)
	if ra := r.header.Get("Retry-After"); ra != "30" && ra != "29" {
		t.Errorf("Retry-After %q, want about 30", ra)
	}
	if s.InsideWindow() != 0 {
		t.Errorf("InsideWindow = %d before any request came inside it", s.InsideWindow())
	}
	want(t, do(t, s, "GET", "/repos/octo/demo/issues/1", nil), 200) // reads pass the write limit
	if got := s.InsideWindow(); got != 1 {
		t.Errorf("InsideWindow = %d, want 1", got)
	}
	if f := s.Refusals(); len(f) != 1 || f[0].Primary || f[0].Path != "/repos/octo/demo/issues/1/comments" {
		t.Errorf("refusals %+v", f)
	}

	p := New(t, Options{})
	p.SetLimits(Limits{Primary: 2, PrimaryWindow: time.Hour})
	want(t, do(t, p, "GET", "/repos/octo/demo", nil), 200)
	want(t, do(t, p, "GET", "/repos/octo/demo", nil), 200)
	r = do(t, p, "GET", "/repos/octo/demo", nil)
	want(t, r, 403)
	if r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Reset") == "" || r.header.Get("Retry-After") != "" {
		t.Errorf("primary refusal headers %v", r.header)
	}
	if f := p.Refusals(); len(f) != 1 || !f[0].Primary || time.Until(f[0].Until) < 59*time.Minute {
		t.Errorf("refusals %+v", f)
	}
}
