package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// A GitHub that keeps failing one request (every edit of the status comment answered 429 with Retry-After:
// 0 three times, then 502, so that the client's retries wait no time and its last answer is a 5xx) gets a few runs
// dispatched to finish the step, engine.MaxFinishing in a row, and then none: the chain ends with an error
// that says so, instead of dispatching itself for as long as the outage lasts. The agent's work is not
// redone by the runs that try to finish it.
func TestRobustFaultsFinishingIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, "research: false\n"), githubtest.Options{GitHTTP: true})
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	var mu sync.Mutex
	failed := 0
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPatch || !strings.HasPrefix(r.URL.Path, "/repos/octo/demo/issues/comments/") {
			return false
		}
		mu.Lock()
		failed++
		limited := failed%4 != 0
		mu.Unlock()
		if limited {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit."}` + "\n"))
			return true
		}
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`{"message":"Server Error"}` + "\n"))
		return true
	})
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.run("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil)
	runs := []result{r}
	for len(runs) < 12 {
		ds := e.srv.Dispatches()
		if e.seen >= len(ds) {
			break
		}
		d := ds[e.seen]
		e.seen = len(ds)
		runs = append(runs, e.run("workflow_dispatch", dispatchEvent(t, d.Inputs), nil))
	}
	// The label run records the plan's attempt before its agent starts (the status comment is new: created,
	// not edited), plans, and its edit recording the outcome fails; so do the MaxFinishing runs dispatched to
	// finish it.
	if got, want := len(runs), 1+engine.MaxFinishing; got != want {
		t.Fatalf("%d runs, want %d (the label run, %d runs to finish it)", got, want, engine.MaxFinishing)
	}
	for i, r := range runs[1:] {
		if r.exit == 0 {
			t.Errorf("run %d exited 0 with every edit of the status comment failing", i+1)
		}
	}
	last := runs[len(runs)-1]
	if !strings.Contains(last.stdout, "no run is dispatched again") {
		t.Errorf("the last run does not say why it dispatched nothing:\n%s%s", last.stdout, last.stderr)
	}
	if got := e.invocations(); len(got) != 1 {
		t.Errorf("agent invocations = %q, want the plan once (its work is not redone)", got)
	}

	// The count stays while the issue is open (a sweep leaves it), and goes once the issue is closed.
	ref := fmt.Sprintf("refs/ralph/finish/%d", n)
	finishCount := func() string {
		out, err := exec.Command("git", "--git-dir", e.srv.BareRepo, "for-each-ref", "--format=%(refname)", "refs/ralph/finish/").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := finishCount(); got != ref {
		t.Fatalf("finishing counts after the chain: %q, want %s", got, ref)
	}
	schedule := map[string]any{"schedule": "17 * * * *"}
	e.run("schedule", schedule, nil)
	if got := finishCount(); got != ref {
		t.Errorf("a sweep with #%d open deleted its finishing count: %q", n, got)
	}
	e.srv.CloseIssue(n)
	sweep := e.run("schedule", schedule, nil)
	if got := finishCount(); got != "" {
		t.Errorf("a sweep with #%d closed left its finishing count: %q\n%s%s", n, got, sweep.stdout, sweep.stderr)
	}
}
