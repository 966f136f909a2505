package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// transientFaults are the answers GitHub gives for a while: a server error, and its secondary rate limits
// (403 or 429 with Retry-After, and 403 with only the message).
var transientFaults = []struct {
	status     int
	retryAfter string
	body       string
}{
	{http.StatusBadGateway, "", `{"message":"Server Error"}`},
	{http.StatusServiceUnavailable, "", `{"message":"Service Unavailable"}`},
	{http.StatusForbidden, "1", `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","status":"403"}`},
	{http.StatusTooManyRequests, "1", `{"message":"You have exceeded a secondary rate limit.","status":"429"}`},
	{http.StatusForbidden, "", `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","status":"403"}`},
}

// TestRobustFaults runs the whole flow (label to pull request, a one-phase plan, git over the server's smart
// HTTP) while the GitHub test server misbehaves on every kind of request — API reads and writes, GraphQL,
// dispatches, git's ref listings, fetches and pushes: transient answers (5xx, secondary rate limits with and
// without Retry-After), lost answers (the server did the work, the client never saw it), 5xx after the
// write. Nothing re-runs a run from outside (driveOpts reruns: 0): each run ends with its step recorded and
// the next run dispatched, or with a run dispatched to finish it. The end is compared with a clean run's:
// the same state, the same comments of each kind with the same bodies, the same commits and files on the
// branch, the same pull request, no lock left, and the agent invoked exactly as often.
//
// By default the first case injects a short run of transient faults (each kind once or twice), which keeps
// `go test ./...` within go test's timeout on a small, busy machine: each fault costs the client a real wait
// of a second or two. RALPH_E2E_SOAK=1 (set by .ci/run) injects them on 20% of all requests instead.
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
	// long: faults on 20% of all requests; otherwise at most shortFaults of them, enough for each kind.
	long := soak()
	const shortFaults = 10

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
			name: "transient answers on 20% of requests, API and git",
			// Without soak, at most shortFaults answers are spoiled: the API's five kinds in turn and git's two.
			inject: func(t *testing.T, e *env) func() int {
				var mu sync.Mutex
				rng := rand.New(rand.NewPCG(20, 502)) // seeded: the same requests fail on every run of the test
				n, api, gitN, dispatchFailed := 0, 0, 0, false
				// spent: the short run has injected its share of this kind (API or git).
				spent := func(k int) bool { return !long && k >= shortFaults/2 }
				e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					// The first dispatch fails whatever the draw, so that a failed dispatch is always among the
					// faults (a flow makes few dispatches: a draw may miss them all).
					first := !dispatchFailed && strings.HasSuffix(r.URL.Path, "/dispatches")
					if (rng.Float64() >= 0.2 || spent(api)) && !first {
						return false
					}
					dispatchFailed = dispatchFailed || strings.HasSuffix(r.URL.Path, "/dispatches")
					f := transientFaults[api%len(transientFaults)] // each kind in turn
					api++
					if f.retryAfter != "" {
						w.Header().Set("Retry-After", f.retryAfter)
					}
					n++
					w.WriteHeader(f.status)
					_, _ = w.Write([]byte(f.body + "\n"))
					return true
				})
				e.srv.GitFaults(func(service string, r *http.Request) githubtest.GitFault {
					mu.Lock()
					defer mu.Unlock()
					if rng.Float64() >= 0.2 || spent(gitN) {
						return githubtest.GitFault{}
					}
					n++
					// Both kinds in turn, so that a short run has each.
					if gitN++; gitN%2 == 1 {
						return githubtest.GitFault{Status: http.StatusBadGateway}
					}
					return githubtest.GitFault{Status: http.StatusTooManyRequests, RetryAfter: "1"}
				})
				return func() int { mu.Lock(); defer mu.Unlock(); return n }
			},
			check: func(t *testing.T, e *env, rs []result) {
				bad, kinds := 0, map[string]int{}
				for _, r := range e.srv.Requests() {
					if r.Status >= 400 {
						bad++
						kinds[fmt.Sprint(r.Status)]++
					}
				}
				for _, r := range e.srv.GitFaulted() {
					kinds[fmt.Sprintf("git %d", r.Status)]++
				}
				if !long && bad < 4 {
					t.Errorf("%d of %d requests were answered an error, want at least 4 (the short run's API faults)", bad, len(e.srv.Requests()))
				}
				if long && (bad == 0 || bad*100 < len(e.srv.Requests())*10) {
					t.Errorf("%d of %d requests were answered an error, want about 20%%", bad, len(e.srv.Requests()))
				}
				for _, k := range []string{"502", "403", "429", "git 502", "git 429"} {
					if kinds[k] == 0 {
						t.Errorf("no request was answered %s: %v", k, kinds)
					}
				}
				// Dispatches included: one answered 502 is repeated, so the chain goes on without a rerun.
				badDispatch := 0
				for _, r := range e.srv.Requests() {
					if r.Status >= 400 && strings.HasSuffix(r.Path, "/dispatches") {
						badDispatch++
					}
				}
				if badDispatch == 0 {
					t.Errorf("no dispatch was answered an error")
				}
				for i, r := range rs {
					if strings.Contains(r.stdout+r.stderr, "dispatching ralph.yml") {
						t.Errorf("run %d failed to dispatch the next step:\n%s%s", i, r.stdout, r.stderr)
					}
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
				// Each of these requests takes effect on the server but its answer is lost: the first artifact
				// comment, the third edit of the status comment, the fifth write of the state label (adding
				// or setting the issue's labels), the pull request, the second dispatch, the third GraphQL
				// query, the first REST read; and on git, the second push (the lock's or a branch's), the
				// third fetch and the fourth ref listing.
				lose := map[string]int{"POST comment": 2, "PATCH comment": 3, "label write": 5, "POST pull": 1, "dispatch": 2, "graphql": 3, "GET": 1}
				e.srv.LoseResponse(func(method, path string, status int) bool {
					mu.Lock()
					defer mu.Unlock()
					kind := ""
					switch {
					case method == http.MethodPost && path == "/repos/octo/demo/issues/1/comments":
						kind = "POST comment"
					case method == http.MethodPatch && strings.HasPrefix(path, "/repos/octo/demo/issues/comments/"):
						kind = "PATCH comment"
					case (method == http.MethodPost || method == http.MethodPut) && path == "/repos/octo/demo/issues/1/labels":
						kind = "label write"
					case method == http.MethodPost && path == "/repos/octo/demo/pulls":
						kind = "POST pull"
					case method == http.MethodPost && path == "/repos/octo/demo/actions/workflows/ralph.yml/dispatches":
						kind = "dispatch"
					case strings.HasSuffix(path, "/graphql"):
						kind = "graphql"
					case method == http.MethodGet:
						kind = "GET"
					default:
						return false
					}
					seen[kind]++
					return status < 300 && seen[kind] == lose[kind]
				})
				gitLose := map[string]int{"git-receive-pack": 2, "git-upload-pack": 3, "info/refs": 4}
				e.srv.GitFaults(func(service string, r *http.Request) githubtest.GitFault {
					mu.Lock()
					defer mu.Unlock()
					seen[service]++
					return githubtest.GitFault{Lose: seen[service] == gitLose[service]}
				})
				return func() int { return len(e.srv.LostResponses()) + len(e.srv.GitFaulted()) }
			},
			check: func(t *testing.T, e *env, rs []result) {
				if got := len(e.srv.LostResponses()); got != 7 {
					t.Errorf("%d responses lost, want 7: %v", got, e.srv.LostResponses())
				}
				if got := len(e.srv.GitFaulted()); got != 3 {
					t.Errorf("%d git answers lost, want 3: %v", got, e.srv.GitFaulted())
				}
				// A run that could not learn what a write did ends with a run dispatched to finish it.
				for i, r := range rs {
					if r.exit != 0 && !strings.Contains(r.stdout+r.stderr, "dispatching a run to finish the step") {
						t.Errorf("run %d exited %d without dispatching a run to finish its step:\n%s%s", i, r.exit, r.stdout, r.stderr)
					}
				}
			},
		},
		{
			// GitHub may answer 502 or 504 to a write it applied. ralph's client retries 5xx answers, so the
			// repeat meets what the first attempt did — except for a new comment, which it does not repeat:
			// the engine looks for the comment's marker first. A dispatch is repeated too: GitHub keeps one
			// pending run of the issue's concurrency group, as the harness does.
			name: "5xx after the write",
			inject: func(t *testing.T, e *env) func() int {
				var mu sync.Mutex
				seen := map[string]int{}
				// The pull request, the second edit of the status comment, the third write of the state label,
				// the third dispatch. (The lock is a git push: see internal/lock's TestGitLockLostAnswers.)
				spoil := map[string]int{"POST pull": 1, "PATCH comment": 2, "label write": 3, "POST comment": 2, "dispatch": 3}
				e.srv.ReplaceResponse(func(method, path string, status int) int {
					mu.Lock()
					defer mu.Unlock()
					kind := ""
					switch {
					case method == http.MethodPost && path == "/repos/octo/demo/pulls":
						kind = "POST pull"
					case method == http.MethodPost && path == "/repos/octo/demo/issues/1/comments":
						kind = "POST comment"
					case method == http.MethodPatch && strings.HasPrefix(path, "/repos/octo/demo/issues/comments/"):
						kind = "PATCH comment"
					case (method == http.MethodPost || method == http.MethodPut) && path == "/repos/octo/demo/issues/1/labels":
						kind = "label write"
					case method == http.MethodPost && path == "/repos/octo/demo/actions/workflows/ralph.yml/dispatches":
						kind = "dispatch"
					default:
						return 0
					}
					if seen[kind]++; status < 300 && seen[kind] == spoil[kind] {
						return http.StatusBadGateway
					}
					return 0
				})
				return func() int { return len(e.srv.ReplacedResponses()) }
			},
			check: func(t *testing.T, e *env, rs []result) {
				if got := len(e.srv.ReplacedResponses()); got != 5 {
					t.Errorf("%d answers replaced, want 5: %v", got, e.srv.ReplacedResponses())
				}
				// Each repeat is recognised in the run itself: "a pull request already exists" is looked up; the edit and the label are the same
				// again. No run fails.
				if len(rs) != ref.runs {
					t.Errorf("%d runs, want %d as in a clean run", len(rs), ref.runs)
				}
				for i, r := range rs {
					if r.exit != 0 {
						t.Errorf("run %d exited %d, want 0:\n%s", i, r.exit, r.stderr)
					}
				}
			},
		},
	}

	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				e := newEnvWith(t, cfg, githubtest.Options{GitHTTP: true}) // git over HTTP, where git's faults are injected
				for k, v := range controls {
					e.setControl(k, v)
				}
				n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
				injected := c.inject(t, e)
				rs := e.drive(n, driveOpts{maxRuns: 20})
				e.srv.Intercept(nil)
				e.srv.LoseResponse(nil)
				e.srv.ReplaceResponse(nil)
				e.srv.GitFaults(nil)
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
	line := fmt.Sprintf("faults: %d runs, %d injected faults, %d duplicates, %d lost", runs, faults, dups, lost)
	fmt.Println(line)
	// go test shows a passing package's output only with -v: .ci/run names a file to keep the line in.
	if path := os.Getenv("RALPH_FAULTS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Errorf("writing RALPH_FAULTS_REPORT: %v", err)
		}
	}
	if dups != 0 || lost != 0 {
		t.Errorf("faults: %d duplicates, %d lost; want none", dups, lost)
	}
}
