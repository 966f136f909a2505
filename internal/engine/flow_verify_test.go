package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// implementing is a harness whose issue is In Progress with the default plan's two phases to do.
func implementing(t *testing.T, mod func(*config.Config)) (*harness, int) {
	t.Helper()
	h := newHarness(t, func(c *config.Config) {
		c.Review, c.Research = config.ReviewSkip, false
		if mod != nil {
			mod(c)
		}
	})
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 2)
	return h, n
}

// TestFlowVerify: verify commands run in the agent's copy, inside its boundary (through this test binary
// as the supervisor); a phase whose verify fails is not done and nothing of it is pushed.
func TestFlowVerify(t *testing.T) {
	t.Parallel()
	h, n := implementing(t, func(c *config.Config) {
		c.Verify = []string{`test -f phase1.txt && echo "verified $RALPH_COMMAND"`, `test "$(cat phase1.txt)" = "phase 1 of 2"`}
	})
	branch := branchOf(n, "parse-widgets")
	res := h.advance(n)
	if res.Step != workflow.Implement || res.Message != "phase 1 of 2 done" {
		t.Fatalf("Result = %+v", res)
	}
	h.log.mu.Lock()
	out := h.log.untrusted[`verify: test -f phase1.txt && echo "verified $RALPH_COMMAND"`].String()
	h.log.mu.Unlock()
	if !strings.Contains(out, "verified verify") {
		t.Errorf("verify's output = %q", out)
	}

	// Phase 2 writes phase1.txt anew: the second command fails.
	h.agent.set("implement", func(a *agentRun) (agentResult, error) {
		a.file("phase1.txt", "broken\n")
		return ok()
	})
	res, err := h.eng.Advance(context.Background(), n)
	se := stepError(err)
	if se == nil || se.Step != "verify" || !strings.Contains(se.Reason, "failed (exit code 1)") {
		t.Fatalf("Advance error = %v", err)
	}
	if res.Step != workflow.Implement || res.State != workflow.InProgress {
		t.Errorf("Result = %+v", res)
	}
	if diff := cmp.Diff([]string{"ralph: plan for #1 Parse widgets", "ralph: Phase 1 of 2: #1 Add the parser"}, h.subjects(branch)); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	if rec := h.gh.record(t, n); rec.FailedStep != workflow.Implement || rec.Phases[1].SHA != "" {
		t.Errorf("record: failed %q, phase 2 %q", rec.FailedStep, rec.Phases[1].SHA)
	}
	if cs := h.gh.commentsStarting(n, "### ralph: implement failed (1 of 2)"); len(cs) != 1 || !strings.Contains(cs[0], "Verify command `test") {
		t.Errorf("failure comments: %q", cs)
	}
}

// TestFlowSecrets: a change or a document that holds a secret's value is refused, and nothing of it is
// pushed or posted; a failure comment never shows the value.
func TestFlowSecrets(t *testing.T) {
	t.Parallel()
	const token = "ghs_0123456789abcdefTOKEN"
	const key = "sk-model-key-0123456789"
	h, n := implementing(t, func(c *config.Config) { c.Agent.Env = map[string]string{"MODEL_KEY": ""} })
	h.eng.Secrets = []string{token, "short"}
	h.eng.AgentEnv = append(h.eng.AgentEnv, "MODEL_KEY="+key)
	branch := branchOf(n, "parse-widgets")
	before := h.subjects(branch)
	h.agent.set("implement", func(a *agentRun) (agentResult, error) {
		a.file("config.txt", "key = "+key+"\n")
		return agentResult{ExitCode: 0, Tail: "wrote " + token}, nil
	})
	_, err := h.eng.Advance(context.Background(), n)
	se := stepError(err)
	if se == nil || !strings.Contains(se.Reason, "`config.txt` (holds the value of MODEL_KEY)") {
		t.Fatalf("Advance error = %v", err)
	}
	if diff := cmp.Diff(before, h.subjects(branch)); diff != "" {
		t.Errorf("a change holding a secret was pushed (-before +after):\n%s", diff)
	}
	inv := h.agent.last()
	for _, kv := range inv.Env {
		if strings.Contains(kv, token) {
			t.Errorf("the agent's environment holds ralph's token: %q", kv)
		}
	}
	if !containsString(inv.Env, "MODEL_KEY="+key) {
		t.Errorf("agent.env's pass-through variable did not reach the agent: %v", inv.Env)
	}
	for _, c := range h.gh.allComments(n) {
		if strings.Contains(c.Body, key) || strings.Contains(c.Body, token) {
			t.Errorf("a comment shows a secret:\n%s", c.Body)
		}
	}
}

// TestFlowSecretInDocument: a research document that holds ralph's token is neither committed nor posted.
func TestFlowSecretInDocument(t *testing.T) {
	t.Parallel()
	const token = "ghs_0123456789abcdefTOKEN"
	h := newHarness(t, nil)
	h.eng.Secrets = []string{token}
	h.agent.set("research", writes("# Research\n\nThe token is "+token+"\n"))
	n := h.enrolled("Parse widgets")
	_, err := h.eng.Advance(context.Background(), n)
	if se := stepError(err); se == nil || !strings.Contains(se.Reason, "holds the value of ralph's GitHub token") {
		t.Fatalf("Advance error = %v", err)
	}
	if h.branchExists(branchOf(n, "parse-widgets")) || len(h.gh.commentsStarting(n, "## Research Document")) != 0 {
		t.Errorf("the document was committed or posted")
	}
	for _, c := range h.gh.allComments(n) {
		if strings.Contains(c.Body, token) {
			t.Errorf("a comment shows the token:\n%s", c.Body)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
