package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// A dispatch GitHub keeps refusing past ralph's wait for its rate limits (the test's seam
// RALPH_TEST_LIMIT_WAIT makes that wait 3 s instead of an hour) is lost: the run says so and fails, the
// issue's record and status comment say the next step was not started and that the next sweep takes it,
// gh ralph status says so too, and the next sweep (sweep.max 1) takes that issue before an older issue
// that is ready; that run clears the record's waiting and ralph's mark. Through the built binary.
func TestSweepTakesLostDispatchFirst(t *testing.T) {
	t.Parallel()
	// Over HTTPS with an Enterprise prefix, as gh ralph status needs: the Action's runs trust the server too.
	e := newEnvWith(t, baseConfig(t, "sweep:\n  max: 1\n"), githubtest.Options{APIPrefix: "/api/v3", TLS: true})
	vars := cliVars(t, e.srv)
	trust := map[string]string{"SSL_CERT_FILE": vars["SSL_CERT_FILE"]}
	older := e.srv.CreateIssue("octocat", "Add a farewell", "Please.")
	e.srv.AddLabel(older, workflow.LabelBuild, maintainer) // enrolled, ready, not started: the oldest
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	var refused atomic.Int32
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/dispatches") {
			return false
		}
		refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}` + "\n"))
		return true
	})
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{env: map[string]string{"RALPH_TEST_LIMIT_WAIT": "3s", "SSL_CERT_FILE": trust["SSL_CERT_FILE"]}}).wait()
	if r.exit == 0 || refused.Load() < 2 || len(e.srv.Dispatches()) != 0 {
		t.Fatalf("label run: exit %d with %d dispatches refused and %d taken; want a failed run, the dispatch refused until ralph gave up\n%s%s", r.exit, refused.Load(), len(e.srv.Dispatches()), r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "the next sweep takes it first") {
		t.Errorf("the label run does not say the next sweep takes #%d:\n%s%s", n, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	note := "The next step (plan) was not started."
	if body := e.statusComment(n); !strings.Contains(body, note) || !strings.Contains(body, fmt.Sprintf("The next sweep (the scheduled run with `command: sweep`) takes #%d first", n)) {
		t.Errorf("the status comment does not say the plan was not started and the next sweep takes it:\n%s", body)
	}
	marks := func() string {
		out, err := exec.Command("git", "--git-dir", e.srv.BareRepo, "for-each-ref", "--format=%(refname)", "refs/ralph/waiting/").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if got, want := marks(), fmt.Sprintf("refs/ralph/waiting/%d", n); got != want {
		t.Errorf("ralph's marks after the lost dispatch: %q, want %s", got, want)
	}

	// gh ralph status says so (its set-up answers GET /user as a person: the refusals end here).
	c := newCLIEnvOn(t, e.srv, "", vars)
	st := c.cli(binary, "status", fmt.Sprint(n))
	if st.exit != 0 || !strings.Contains(st.stdout, "waiting\t"+note) || !strings.Contains(st.stdout, fmt.Sprintf("the next sweep takes #%d first", n)) {
		t.Errorf("gh ralph status: exit %d, want a waiting line:\n%s%s", st.exit, st.stdout, st.stderr)
	}
	js := c.cli(binary, "status", fmt.Sprint(n), "--json", "waiting", "--jq", ".waiting.step")
	if js.exit != 0 || strings.TrimSpace(js.stdout) != "plan" {
		t.Errorf("gh ralph status --json waiting: exit %d, %q%s", js.exit, js.stdout, js.stderr)
	}
	e.srv.Intercept(nil)

	// The next sweep takes #n first, although #older is older and ready.
	sweep := e.start("schedule", map[string]any{"schedule": "*/15 * * * *"}, nil, runOpts{env: trust}).wait()
	if sweep.exit != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", sweep.exit, sweep.stdout, sweep.stderr)
	}
	if !strings.Contains(sweep.stdout, fmt.Sprintf("sweep: taking first [%d]", n)) {
		t.Errorf("the sweep does not say it takes #%d first:\n%s", n, sweep.stdout)
	}
	e.wantState(n, workflow.PlanInReview)
	if got := workflow.StatesFromLabels(e.srv.Labels(older)); len(got) != 0 {
		t.Errorf("the sweep (max 1) also moved the older #%d: %v", older, got)
	}
	if body := e.statusComment(n); strings.Contains(body, "was not started") || strings.Contains(body, `"waiting"`) {
		t.Errorf("the status comment still says #%d waits after the run that went on with it:\n%s", n, body)
	}
	if got := marks(); got != "" {
		t.Errorf("ralph's marks after the sweep took #%d: %q", n, got)
	}
}

// gh ralph sweep takes what a scheduled sweep takes, in its order: an issue ralph marked as waiting for a
// sweep (refs/ralph/waiting/<N>, here pushed by hand, as only someone with write access can) before an older
// ready one; it deletes the mark of the issue it takes.
func TestCLISweepTakesMarkedFirst(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	older := e.srv.CreateIssue(maintainer, "Add a farewell", "Please.", workflow.LabelBuild)
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Please.", workflow.LabelBuild)
	main := strings.TrimSpace(e.git("", "--git-dir", e.srv.BareRepo, "rev-parse", "refs/heads/main"))
	mark := fmt.Sprintf("refs/ralph/waiting/%d", n)
	e.git("", "--git-dir", e.srv.BareRepo, "update-ref", mark, main)
	r := e.cli(binary, "sweep", "--max", "1")
	if r.exit != 0 {
		t.Fatalf("gh ralph sweep: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if got := workflow.StatesFromLabels(e.srv.Labels(n)); len(got) != 1 || got[0] != workflow.ReadyForPlan {
		t.Errorf("#%d (marked) is %v after the sweep, want Ready for Plan\n%s%s", n, got, r.stdout, r.stderr)
	}
	if got := workflow.StatesFromLabels(e.srv.Labels(older)); len(got) != 0 {
		t.Errorf("the sweep (max 1) took the older #%d: %v", older, got)
	}
	if e.gitOK("", "--git-dir", e.srv.BareRepo, "rev-parse", "--verify", "--quiet", mark) {
		t.Errorf("the mark of #%d is left after the sweep took it", n)
	}
}
