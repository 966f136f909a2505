package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// refuseOutcomes has the test server answer 422 to every write of a status comment that records an outcome
// of the plan step (a record with no attempt under way that does not ask for a person), as GitHub
// answers a body over its limit: the writes before the agent starts, and the one asking for a person, pass.
func refuseOutcomes(srv *githubtest.Server) {
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, "/comments") {
			return false
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var req struct {
			Body string `json:"body"`
		}
		if json.Unmarshal(b, &req) != nil {
			return false
		}
		rec, ok, err := engine.ParseRecord(req.Body)
		if err != nil || !ok || rec.Attempt != nil || rec.State == workflow.HumanNeeded || rec.Last == nil || rec.Last.Step != workflow.Plan {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}]}`))
		return true
	})
}

// SECURITY: whatever GitHub answers to the write of a step's outcome, the agent starts at most max_failures
// times for the step, and a record GitHub refuses sends the issue to a person (the Action).
func TestHostileUnrecordedOutcomeAction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "max_failures: 3\n"))
	refuseOutcomes(e.srv)
	e.setControl("plan_without_phases", "")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.label(n, maintainer)
	e.chain(6)
	for range 4 {
		e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": fmt.Sprint(n)}), nil)
	}
	if got := e.invocations(); len(got) != 2 {
		t.Errorf("agent invocations %v, want the research and the plan once", got)
	}
	e.wantState(n, workflow.HumanNeeded)
	if got := e.commentsStarting(n, "### ralph: the outcome of plan could not be recorded"); got != 1 {
		for _, c := range e.srv.Comments(n) {
			t.Logf("comment: %.80q", c.Body)
		}
		t.Errorf("%d comments asking for a person, want 1", got)
	}
}

// The same through gh ralph advance.
func TestHostileUnrecordedOutcomeCLI(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t)+"max_failures: 3\n")
	refuseOutcomes(e.srv)
	e.setControl("plan_without_phases", "")
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	for range 4 {
		e.cli(binary, "advance", fmt.Sprint(n))
	}
	if got := e.invocations(); len(got) != 2 {
		t.Errorf("agent invocations %v, want the research and the plan once", got)
	}
	e.wantState(n, workflow.HumanNeeded)
}
