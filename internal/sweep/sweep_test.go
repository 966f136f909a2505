package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// ralphAs is the account ralph's token writes as: the Actions bot.
const ralphAs = engine.ActionsBot

// hub is the GitHub test server for octo/widgets, whose token writes as ralphAs, with ralph's client of it;
// alice has write access. A test may make GitHub fail the next request of one kind (fail).
type hub struct {
	srv    *githubtest.Server
	client *ghapi.Client

	mu    sync.Mutex
	fails []*regexp.Regexp // the GET paths to answer 500 to, once each
}

// Paths of the requests a sweep makes that a test fails.
var (
	blockedByPath = regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/dependencies/blocked_by$`)
	eventsPath    = regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/events$`)
	refsPath      = regexp.MustCompile(`^/repos/octo/widgets/git/matching-refs/`)
)

func newHub(t *testing.T) *hub {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{Owner: "octo", Repo: "widgets", TokenLogin: ralphAs})
	srv.SetPermission("alice", "write")
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "widgets", Transport: srv.Client().Transport,
		Retry: ghapi.Retry{Attempts: 1}, // a failure a test asks for reaches the sweep as it is
	})
	if err != nil {
		t.Fatal(err)
	}
	g := &hub{srv: srv, client: c}
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !g.failing(r.URL.EscapedPath()) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"message": %q}`, http.StatusText(http.StatusInternalServerError))
		return true
	})
	return g
}

// fail makes GitHub answer 500 to the next GET whose path matches path.
func (g *hub) fail(path *regexp.Regexp) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fails = append(g.fails, path)
}

func (g *hub) failing(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, re := range g.fails {
		if re.MatchString(path) {
			g.fails = append(g.fails[:i], g.fails[i+1:]...)
			return true
		}
	}
	return false
}

// addIssue opens an issue by alice, with labels (each added by her).
func (g *hub) addIssue(title string, labels ...string) int {
	return g.srv.CreateIssue("alice", title, "", labels...)
}

// count counts the GET requests whose path matches path.
func (g *hub) count(path *regexp.Regexp) int {
	n := 0
	for _, r := range g.srv.Requests() {
		if r.Method == http.MethodGet && path.MatchString(r.Path) {
			n++
		}
	}
	return n
}

// setRef points ref at main's commit in the server's repository, as a run of ralph elsewhere would.
func (g *hub) setRef(t *testing.T, ref string) {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", g.srv.BareRepo, "update-ref", ref, "refs/heads/main")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-ref %s: %v: %s", ref, err, out)
	}
}

// writers allows the logins in allowed; err, when set, is its answer to everyone.
type writers struct {
	allowed map[string]bool
	err     error
}

var _ engine.Authorizer = writers{}

func (a writers) Authorize(_ context.Context, login string) (bool, error) {
	return a.allowed[login], a.err
}

// TestCandidates: a sweep picks enrolled open issues with a step to do, priority first then oldest, and
// says why it passed over the others.
func TestCandidates(t *testing.T) {
	t.Parallel()
	gh := newHub(t)
	b := workflow.LabelBuild
	ready := gh.addIssue("ready", b, workflow.ResearchNeeded.Label())                                    // 1
	gh.addIssue("at a gate", b, workflow.InReview.Label())                                               // 2
	locked := gh.addIssue("locked", b, workflow.ReadyForPlan.Label())                                    // 3
	blocked := gh.addIssue("blocked", b, workflow.ReadyForPlan.Label())                                  // 4
	blocker := gh.addIssue("blocker")                                                                    // 5
	stranger := gh.addIssue("stranger's")                                                                // 6
	urgent := gh.addIssue("urgent", b, workflow.InProgress.Label(), "priority:high")                     // 7
	stale := gh.addIssue("stale lock", b, workflow.PlanInReview.Label())                                 // 8
	closed := gh.addIssue("closed", b)                                                                   // 9
	child := gh.srv.CreateIssue(ralphAs, "ralph's sub-issue", "body\n<!-- ralph:parent 1 part 1 -->", b) // 10
	gh.addIssue("done", b, workflow.Done.Label())                                                        // 11
	gh.srv.AddLabel(stranger, b, "mallory")
	gh.srv.CloseIssueAs(closed, "completed")
	gh.srv.AddBlockedBy(blocked, blocker)
	for _, ref := range []string{"refs/ralph/locks/3", "refs/ralph/locks/8", "refs/ralph/locks/x"} {
		gh.setRef(t, ref)
	}
	cfg := config.Default()
	opts := sweep.Options{
		Max: 10, Auth: writers{allowed: map[string]bool{"alice": true}}, TrustedBot: ralphAs,
		Locks: func(_ context.Context, n int) (bool, string, error) { return n == locked, "Actions run 5", nil },
	}
	sw, err := sweep.Candidates(context.Background(), gh.client, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := sweep.Result{
		Picked: []int{urgent, ready, stale, child},
		Skipped: []sweep.Skipped{
			{Issue: locked, Reason: "held by Actions run 5"},
			{Issue: blocked, Reason: "blocked by #5"},
			{Issue: stranger, Reason: "ralph:build was added by @mallory, who may not drive ralph"},
		},
		Looked: 9, Close: 7,
		// Every enrolled open issue: not the blocker (not enrolled) nor the closed one.
		Open: []int{ready, 2, locked, blocked, stranger, urgent, stale, child, 11},
	}
	if diff := cmp.Diff(want, sw); diff != "" {
		t.Errorf("Candidates (-want +got):\n%s", diff)
	}

	// Interactive review: Plan in Review is a gate. Max bounds what is picked.
	cfg.Review = config.ReviewInteractive
	opts.Max = 1
	sw, err = sweep.Candidates(context.Background(), gh.client, cfg, opts)
	if err != nil || !cmp.Equal(sw.Picked, []int{urgent}) {
		t.Errorf("Candidates = %+v, %v", sw, err)
	}
}

// TestCandidatesGitHubFails: GitHub failing the listing is the sweep's error; failing a request about one
// issue passes over that issue (with the error), and the sweep goes on to the next, each failure taking a
// place of the sweep's max.
func TestCandidatesGitHubFails(t *testing.T) {
	t.Parallel()
	auth := writers{allowed: map[string]bool{"alice": true}}
	for _, tc := range []struct {
		name string
		path *regexp.Regexp
	}{{"BlockedBy", blockedByPath}, {"LabeledBy", eventsPath}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := newSweepHub(t)
			// A closed blocker: the sweep reads the first issue's blockers, and finds none open.
			blocker := gh.addIssue("blocker")
			gh.srv.AddBlockedBy(1, blocker)
			gh.srv.CloseIssueAs(blocker, "completed")
			gh.fail(tc.path)
			sw, err := sweep.Candidates(context.Background(), gh.client, config.Default(), sweep.Options{Max: 5, Auth: auth})
			if err != nil {
				t.Fatalf("Candidates with %s failing: %v, want the issue passed over", tc.name, err)
			}
			if len(sw.Picked) != 1 || len(sw.Skipped) != 1 || sw.Skipped[0].Err == nil || !strings.HasSuffix(sw.Skipped[0].Reason, "(the next sweep looks again)") {
				t.Errorf("Candidates with %s failing = %+v; want one picked, one passed over with the error", tc.name, sw)
			}
			// The failure takes a place of the sweep's max.
			gh.fail(tc.path)
			if sw, err = sweep.Candidates(context.Background(), gh.client, config.Default(), sweep.Options{Max: 1, Auth: auth}); err != nil || len(sw.Picked) != 0 {
				t.Errorf("Candidates with %s failing, max 1 = %+v, %v; want nothing picked", tc.name, sw, err)
			}
		})
	}
	gh := newSweepHub(t)
	gh.fail(refsPath)
	if _, err := sweep.Candidates(context.Background(), gh.client, config.Default(), sweep.Options{Max: 5}); err == nil || !strings.Contains(err.Error(), "listing the issue locks") {
		t.Errorf("Candidates with the locks' listing failing: %v, want the sweep's error", err)
	}
	gh.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.EscapedPath() != "/repos/octo/widgets/issues" {
			return false
		}
		w.WriteHeader(http.StatusInternalServerError)
		return true
	})
	if _, err := sweep.Candidates(context.Background(), gh.client, config.Default(), sweep.Options{Max: 5}); err == nil || !strings.Contains(err.Error(), "listing enrolled issues") {
		t.Errorf("Candidates with the listing failing: %v, want the sweep's error", err)
	}
	sw, err := sweep.Candidates(context.Background(), newSweepHub(t).client, config.Default(), sweep.Options{Max: 5, Auth: writers{err: errors.New("down")}})
	if err != nil || len(sw.Picked) != 0 || len(sw.Skipped) != 2 {
		t.Errorf("Candidates with the permission check failing = %+v, %v; want both passed over", sw, err)
	}
}

// newSweepHub holds two issues ready for a step, enrolled by alice.
func newSweepHub(t *testing.T) *hub {
	gh := newHub(t)
	gh.addIssue("one", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	gh.addIssue("two", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	return gh
}

// TestCandidatesNothing: nothing enrolled, nothing picked (an empty list, not nil, for JSON).
func TestCandidatesNothing(t *testing.T) {
	t.Parallel()
	gh := newHub(t)
	gh.addIssue("plain")
	sw, err := sweep.Candidates(context.Background(), gh.client, config.Default(), sweep.Options{Max: 5})
	if err != nil || sw.Picked == nil || len(sw.Picked) != 0 || sw.Looked != 0 {
		t.Errorf("Candidates = %+v, %v", sw, err)
	}
	if gh.count(refsPath) != 0 {
		t.Errorf("the locks were listed with nothing to sweep")
	}
}

// TestCandidatesForgedSubIssue: a sweep takes the Actions bot's ralph:build as a writer's only on a
// sub-issue ralph itself opened, whose body ends with ralph's parent marker; an issue someone else opened
// whose body carries the marker (anywhere, or at its end as ralph writes it) is not one, whoever labeled it.
func TestCandidatesForgedSubIssue(t *testing.T) {
	t.Parallel()
	b := workflow.LabelBuild
	for _, tc := range []struct {
		name, author, body string
		picked             bool
	}{
		{"ralph's sub-issue", ralphAs, "Do one.\n\n---\nPart 1 of 2 of #1, split by ralph's triage.\n<!-- ralph:parent 1 part 1 -->", true},
		{"a stranger's issue ending with the marker", "mallory", "Do it.\n<!-- ralph:parent 1 part 1 -->", false},
		{"a stranger's issue holding the marker's start", "mallory", "<!-- ralph:parent \nDo it.", false},
		{"ralph's issue with the marker not at its end", ralphAs, "<!-- ralph:parent 1 part 1 -->\nmore", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := newHub(t)
			n := gh.srv.CreateIssue(tc.author, "part", tc.body, workflow.ResearchNeeded.Label())
			gh.srv.AddLabel(n, b, ralphAs)
			opts := sweep.Options{Max: 5, Auth: writers{allowed: map[string]bool{"alice": true}}, TrustedBot: ralphAs}
			sw, err := sweep.Candidates(context.Background(), gh.client, config.Default(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(sw.Picked) == 1; got != tc.picked {
				t.Errorf("picked %v, skipped %+v; want picked: %v", sw.Picked, sw.Skipped, tc.picked)
			}
		})
	}
}
