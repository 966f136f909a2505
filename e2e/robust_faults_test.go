package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestRobustFaults runs the whole flow (label to pull request, a one-phase plan) while the GitHub test
// server misbehaves, re-running a run that exits non-zero without dispatching the next step (as a rerun or
// the next sweep would, at most 3 times in a row), and compares the end with a clean run's: the same state,
// the same comments of each kind with the same bodies, the same commits and files on the branch, the same
// pull request, no lock left, and the agent invoked exactly as often (no fault falls between an agent's
// work and the push of its commit, which is git's, not the API's).
//
// At the end it prints one line, `faults: N runs, M injected faults, D duplicates, L lost`, counted from
// what the servers hold (duplicates: comments, commits, pull requests a clean run does not have; lost: what
// a clean run has and the faulty one lacks). `go test` shows it with -v, with -json, or when run in the
// package's directory; in package-list mode (`go test ./e2e/`) it shows test output only for failures.
func TestRobustFaults(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, "")
	controls := map[string]string{"phases": "1"}
	ref := clean(t, cfg, controls)

	var (
		mu                       sync.Mutex
		runs, faults, dups, lost int
	)
	cases := []struct {
		name string
		// inject installs the faults and returns how many it injected so far.
		inject func(t *testing.T, e *env) func() int
		// check looks at the runs and requests once the flow ended.
		check func(t *testing.T, e *env, rs []result)
	}{
		{
			name: "502 on 20% of requests",
			inject: func(t *testing.T, e *env) func() int {
				var mu sync.Mutex
				rng := rand.New(rand.NewPCG(20, 502)) // seeded: the same requests fail on every run of the test
				n := 0
				e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					if rng.Float64() >= 0.2 {
						return false
					}
					n++
					w.WriteHeader(http.StatusBadGateway)
					_, _ = w.Write([]byte(`{"message":"Server Error"}` + "\n"))
					return true
				})
				return func() int { mu.Lock(); defer mu.Unlock(); return n }
			},
			check: func(t *testing.T, e *env, rs []result) {
				bad := 0
				for _, r := range e.srv.Requests() {
					if r.Status == http.StatusBadGateway {
						bad++
					}
				}
				if bad == 0 || bad*100 < len(e.srv.Requests())*10 {
					t.Errorf("%d of %d requests were answered 502, want about 20%%", bad, len(e.srv.Requests()))
				}
			},
		},
		{
			name: "secondary rate limit",
			inject: func(t *testing.T, e *env) func() int {
				var mu sync.Mutex
				posts, n := 0, 0
				e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					if r.Method != http.MethodPost || r.URL.Path != "/repos/octo/demo/issues/1/comments" {
						return false
					}
					// The second comment ralph posts is the first artifact (the research document).
					if posts++; posts != 2 {
						return false
					}
					n++
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusForbidden)
					_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}` + "\n"))
					return true
				})
				return func() int { mu.Lock(); defer mu.Unlock(); return n }
			},
			check: func(t *testing.T, e *env, rs []result) {
				// The client waited and tried again in the same run: no rerun was needed.
				if len(rs) != ref.runs {
					t.Errorf("%d runs, want %d as in a clean run (the limited request is retried, not the run)", len(rs), ref.runs)
				}
				var after []int
				for _, r := range e.srv.Requests() {
					if r.Method == http.MethodPost && r.Path == "/repos/octo/demo/issues/1/comments" {
						after = append(after, r.Status)
					}
				}
				if len(after) < 3 || after[1] != http.StatusForbidden || after[2] != http.StatusCreated {
					t.Errorf("comment posts answered %v, want the second 403 and retried at once (201)", after)
				}
			},
		},
		{
			name: "lost responses",
			inject: func(t *testing.T, e *env) func() int {
				var mu sync.Mutex
				seen := map[string]int{}
				// Each of these writes succeeds on the server but its answer is lost: the first artifact
				// comment, the third edit of the status comment, the fifth state label added.
				lose := map[string]int{"POST comment": 2, "PATCH comment": 3, "POST labels": 5}
				e.srv.LoseResponse(func(method, path string, status int) bool {
					mu.Lock()
					defer mu.Unlock()
					kind := ""
					switch {
					case method == http.MethodPost && path == "/repos/octo/demo/issues/1/comments":
						kind = "POST comment"
					case method == http.MethodPatch && strings.HasPrefix(path, "/repos/octo/demo/issues/comments/"):
						kind = "PATCH comment"
					case method == http.MethodPost && path == "/repos/octo/demo/issues/1/labels":
						kind = "POST labels"
					default:
						return false
					}
					seen[kind]++
					return status < 300 && seen[kind] == lose[kind]
				})
				return func() int { return len(e.srv.LostResponses()) }
			},
			check: func(t *testing.T, e *env, rs []result) {
				if got := len(e.srv.LostResponses()); got != 3 {
					t.Errorf("%d responses lost, want 3: %v", got, e.srv.LostResponses())
				}
				failed := 0
				for _, r := range rs {
					if r.exit != 0 {
						failed++
					}
				}
				// A write whose outcome is unknown fails its run (ralph does not repeat a POST or PATCH
				// blindly); the rerun finds what the lost write did. The lost artifact comment came before
				// its step was recorded, so the rerun finishes that step; the lost status edit and label came
				// after, so the rerun repairs the labels from the record and goes on with the next step: one
				// run more than a clean flow in all.
				if failed != 3 || len(rs) != ref.runs+1 {
					t.Errorf("%d runs, %d failed; want %d runs, 3 failed (one per lost answer)", len(rs), failed, ref.runs+1)
				}
			},
		},
	}

	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, cfg)
				for k, v := range controls {
					e.setControl(k, v)
				}
				n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
				injected := c.inject(t, e)
				rs := e.drive(n, driveOpts{reruns: 3, maxRuns: 20})
				e.srv.Intercept(nil)
				e.srv.LoseResponse(nil)
				e.wantState(n, workflow.InReview)
				diff, d, l := compare(ref.snap, e.snapshot(n, branch))
				if diff != "" {
					t.Errorf("the end differs from a clean run's (-clean +got):\n%s", diff)
				}
				if got := e.invocations(); !slices.Equal(got, ref.invocations) {
					t.Errorf("agent invocations = %q, want %q as in a clean run", got, ref.invocations)
				}
				if injected() == 0 {
					t.Errorf("no fault was injected")
				}
				c.check(t, e, rs)
				t.Logf("%s: %d runs, %d faults, %d requests", c.name, len(rs), injected(), len(e.srv.Requests()))
				mu.Lock()
				runs, faults, dups, lost = runs+len(rs), faults+injected(), dups+d, lost+l
				mu.Unlock()
			})
		}
	})
	fmt.Printf("faults: %d runs, %d injected faults, %d duplicates, %d lost\n", runs, faults, dups, lost)
	if dups != 0 || lost != 0 {
		t.Errorf("faults: %d duplicates, %d lost; want none", dups, lost)
	}
}
