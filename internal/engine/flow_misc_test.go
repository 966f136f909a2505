package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowAgentUnavailable: without an agent (a preset this build lacks) a step that needs one fails before
// it changes anything; the merge step needs none and runs.
func TestFlowAgentUnavailable(t *testing.T) {
	t.Parallel()
	h, n, rec := inReview(t, nil)
	h.eng.AgentErr = errors.New("this build has no claude preset")
	m := h.enrolled("Other")
	h.gh.resetLog()
	if _, err := h.eng.Advance(context.Background(), m); err == nil || err.Error() != fmt.Sprintf("cannot run plan on #%d: this build has no claude preset", m) {
		t.Errorf("Advance without an agent: %v", err)
	}
	if h.gh.writeCount() != 0 {
		t.Errorf("a step that cannot run wrote: %s", h.gh.writes())
	}
	h.gh.mergePull(rec.PR)
	if res := h.advance(n); res.State != workflow.Done {
		t.Errorf("merge without an agent: Result = %+v", res)
	}
}

// TestFlowUnlocked: Unlocked takes no lock and runs the step.
func TestFlowUnlocked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Research = false })
	h.eng.Lock = engine.Unlocked{}
	n := h.enrolled("Parse widgets")
	if res := h.advance(n); res.Step != workflow.Plan {
		t.Errorf("Result = %+v", res)
	}
}

// TestPermissionAuthorizer: write, maintain and admin may drive ralph; bots only when allowed.
func TestPermissionAuthorizer(t *testing.T) {
	t.Parallel()
	perms := map[string]string{"w": "write", "m": "maintain", "a": "admin", "t": "triage", "r": "read"}
	auth := engine.PermissionAuthorizer{
		Permission: func(_ context.Context, login string) (string, error) {
			if login == "broken" {
				return "", errors.New("HTTP 500")
			}
			return perms[login], nil
		},
		AllowedBots: []string{"helper[bot]"},
	}
	for login, want := range map[string]bool{"w": true, "m": true, "a": true, "t": false, "r": false, "nobody": false, "helper[bot]": true, "other[bot]": false} {
		if got, err := auth.Authorize(context.Background(), login); got != want || err != nil {
			t.Errorf("Authorize(%q) = %v, %v; want %v", login, got, err, want)
		}
	}
	if _, err := auth.Authorize(context.Background(), "broken"); err == nil {
		t.Errorf("Authorize with the permission unreadable: no error")
	}
	re := &engine.RefusedError{Login: "t", Action: engine.ActRetry}
	if re.Error() != "@t may not retry: write, maintain or admin permission is needed" {
		t.Errorf("RefusedError = %q", re.Error())
	}
}

// TestFlowIssueTitleNUL: an issue's title is its author's (anyone who can open an issue, who can also edit
// it after a writer enrolled it), and GitHub keeps a NUL in one. It is quoted in the subject of each
// document's commit, an argument of ralph's git, which cannot hold a NUL: the step must still commit, not
// fail every run the same way, uncounted, running the agent again each time. Quoted, it is shown as the
// terminal filter shows it (^@, its @ made no mention).
func TestFlowIssueTitleNUL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse\x00widgets")
	res := h.advance(n)
	if res.Step != workflow.Research || res.State != workflow.ReadyForPlan {
		t.Errorf("research Result = %+v", res)
	}
	if got, want := h.subjects(branchOf(n, "parse-widgets")), []string{"ralph: research for #1 Parse^＠widgets"}; !slices.Equal(got, want) {
		t.Errorf("commits = %q, want %q", got, want)
	}
}
