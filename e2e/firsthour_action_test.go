package e2e

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFirstHourStepSummary: a run writes its step summary once, a failed step's too, and a mistyped command
// gets one that says what happened.
func TestFirstHourStepSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "agent:\n  preset: command\n  command: sh -c 'exit 3'\n  timeout: 2m\n")
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")

	r := e.label(n, maintainer)
	if r.exit == 0 {
		t.Fatalf("a failing agent's run exited 0:\n%s", r.stdout)
	}
	if got := strings.Count(r.summary, "## ralph"); got != 1 {
		t.Errorf("a failed run wrote its summary %d times:\n%s", got, r.summary)
	}
	if !strings.Contains(r.summary, "the agent exited with code 3") {
		t.Errorf("the failed run's summary does not say why:\n%s", r.summary)
	}
	// ralph's own numbers, logins and URLs are written as themselves (in code spans), not as look-alikes
	// that a copy carries along.
	if strings.ContainsAny(r.summary, "\uFF03\uFF20\uFF1A\u2011") || !strings.Contains(r.summary, "#1") {
		t.Errorf("the failed run's summary holds look-alike characters:\n%s", r.summary)
	}

	r = e.comment(n, "/ralph aprove", maintainer)
	if r.exit != 0 {
		t.Fatalf("/ralph aprove: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if got := strings.Count(r.summary, "## ralph"); got != 1 || !strings.Contains(r.summary, "is not a ralph command: replied on #1 with the commands") {
		t.Errorf("a mistyped command's summary (written %d times):\n%s", got, r.summary)
	}
	if !strings.Contains(r.summary, "aprove") {
		t.Errorf("the summary does not say which word:\n%s", r.summary)
	}
	if e.state(n) == workflow.PlanInReview {
		t.Errorf("a mistyped command moved #1")
	}
}

// TestFirstHourActionBadToken: the Action run by hand with a token GitHub refuses says so and exits 4, as
// gh ralph does, before git meets the token (git would only say it cannot prompt for a user name).
func TestFirstHourActionBadToken(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, ""), githubtest.Options{GitHTTP: true}) // git over HTTP, with the token
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.byHand("not-a-token", "INPUT_ISSUE="+itoa(n))
	out := r.stdout + r.stderr
	if r.exit != 4 || !strings.Contains(out, "Bad credentials") || strings.Contains(out, "could not read Username") {
		t.Errorf("a refused token: exit %d, want 4 and bad credentials:\n%s", r.exit, out)
	}
	if strings.Contains(out, "not-a-token") {
		t.Errorf("the output holds the token:\n%s", out)
	}
}

// TestFirstHourSealRestored: the directories a run closes to the agent's user (the workspace's parent, as
// on a runner) get their modes back when the run ends: a run by hand leaves the machine as it was.
func TestFirstHourSealRestored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`closed to the agent: (\S+): mode (0[0-7]+) -> (0[0-7]+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Skip("the run closed no directory to the agent (the agent runs as ralph's own user here)")
	}
	fi, err := os.Stat(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%04o", fi.Mode().Perm()); got != m[2] {
		t.Errorf("%s has mode %s after the run, want %s as before it\n%s", m[1], got, m[2], r.stdout)
	}
}

// TestFirstHourStatusSummary: the status command's run says in its summary what it did, not a row of
// dashes.
func TestFirstHourStatusSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n), "command": "status"}), nil)
	if r.exit != 0 {
		t.Fatalf("status: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if !strings.Contains(r.summary, "replied on the issue with where it is") || strings.Contains(r.summary, "| — | — |") {
		t.Errorf("the status run's summary:\n%s", r.summary)
	}
}

// TestFirstHourBadTokenBeforeGit: a token GitHub refuses is said as bad credentials, exit 4, before ralph's
// git meets it, through every entry of the Action (a label, a comment command, a dispatch, a sweep) and
// gh ralph advance: the server counts the git requests, and there must be none (git would only say it
// cannot prompt for a user name).
func TestFirstHourBadTokenBeforeGit(t *testing.T) {
	t.Parallel()
	counting := func(srv *githubtest.Server) *atomic.Int32 {
		var seen atomic.Int32
		srv.GitFaults(func(string, *http.Request) githubtest.GitFault {
			seen.Add(1)
			return githubtest.GitFault{}
		})
		return &seen
	}
	check := func(t *testing.T, what string, r result, git *atomic.Int32) {
		t.Helper()
		out := r.stdout + r.stderr
		if r.exit != 4 || !strings.Contains(out, "Bad credentials") || strings.Contains(out, "could not read Username") {
			t.Errorf("%s with a refused token: exit %d, want 4 and bad credentials:\n%s", what, r.exit, out)
		}
		if k := git.Load(); k != 0 {
			t.Errorf("%s with a refused token reached git (%d requests) before GitHub's API refused it:\n%s", what, k, out)
		}
	}

	t.Run("action", func(t *testing.T) {
		t.Parallel()
		e := newEnvWith(t, baseConfig(t, ""), githubtest.Options{GitHTTP: true})
		n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
		e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
		// A good token's run first: the issue has a record and a step to take, so each entry below would
		// go on to its git work.
		if r := e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n)}), nil); r.exit != 0 {
			t.Fatalf("a good token's run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
		}
		git := counting(e.srv)
		bad := runOpts{env: map[string]string{"INPUT_TOKEN": "not-a-token"}}
		for _, tt := range []struct {
			what    string
			event   string
			payload any
		}{
			{"a label event", "issues", labeledEvent(t, n, workflow.LabelBuild, maintainer)},
			{"a comment command", "issue_comment", commentEvent(t, n, "/ralph retry", maintainer)},
			{"a dispatch", "workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n)})},
			{"a sweep", "schedule", map[string]any{"schedule": "17 * * * *"}},
		} {
			check(t, tt.what, e.start(tt.event, tt.payload, nil, bad).wait(), git)
		}
	})

	t.Run("advance", func(t *testing.T) {
		t.Parallel()
		srv := githubtest.New(t, githubtest.Options{TLS: true, GitHTTP: true})
		vars := cliVars(t, srv)
		e := newCLIEnvOn(t, srv, agentConfig(t), vars)
		e.git(e.work, "remote", "set-url", "origin", srv.GitURL())
		n := srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
		srv.AddLabel(n, workflow.LabelBuild, maintainer)
		git := counting(srv)
		e.vars["GH_ENTERPRISE_TOKEN"] = "not-a-token"
		check(t, "gh ralph advance", e.cli(binary, "advance", itoa(n)), git)
	})
}

// TestFirstHourBoundaryOnlyWithAgent: the agent's boundary, one long line, is said in a run whose agent
// runs, once, and not in a run where no agent runs (the issue waits at a gate).
func TestFirstHourBoundaryOnlyWithAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: interactive\n"))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	r := e.label(n, maintainer) // the plan step: its agent runs
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.PlanInReview)
	if got := strings.Count(r.stdout, "the agent runs as "); got != 1 {
		t.Errorf("a run whose agent ran said its boundary %d times, want once:\n%s", got, r.stdout)
	}
	r = e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n)}), nil)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "the agent runs as ") {
		t.Errorf("a run in which no agent ran (the issue waits for a person) said the agent's boundary:\n%s", r.stdout)
	}
}

// The same through gh ralph advance: once for the step whose agent runs, not at all at the gate.
func TestFirstHourBoundaryOnlyWithAgentCLI(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t)+"research: false\nreview: interactive\n")
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.cli(binary, "advance", itoa(n)) // enrolls it, and the plan step's agent runs
	if r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.PlanInReview)
	if got := strings.Count(r.stderr, "the agent runs as "); got != 1 {
		t.Errorf("advance whose agent ran said its boundary %d times, want once:\n%s", got, r.stderr)
	}
	r = e.cli(binary, "advance", itoa(n))
	if strings.Contains(r.stdout+r.stderr, "the agent runs as ") {
		t.Errorf("advance at a gate (exit %d), where no agent runs, said the agent's boundary:\n%s%s", r.exit, r.stdout, r.stderr)
	}
}
