package engine_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowUsage: what the agent reports of its usage is the run's, added up in the record and shown in the
// status comment with the budgets.
func TestFlowUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Budget.Issue = 5; c.Agent.MaxCost = 1.5; c.Agent.MaxTokens = 20000 })
	h.agent.set("research", func(a *agentRun) (agentResult, error) {
		a.artifact(researchDoc)
		return agentResult{Usage: &agent.Usage{Turns: 3, InputTokens: 1200, CacheReadTokens: 200, OutputTokens: 300, CostUSD: 0.25, Model: "model-a"}}, nil
	})
	h.agent.set("plan", func(a *agentRun) (agentResult, error) {
		a.artifact(planDoc)
		return agentResult{Usage: &agent.Usage{Turns: 2, InputTokens: 800, OutputTokens: 100, CostUSD: 0.5}}, nil
	})
	n := h.enrolled("Parse widgets")
	res := h.advance(n)
	if res.Usage == nil || res.Usage.Turns != 3 || res.Total == nil || res.Total.CostUSD != 0.25 {
		t.Errorf("research usage %+v, total %+v", res.Usage, res.Total)
	}
	res = h.advance(n)
	if res.Usage == nil || res.Usage.Turns != 2 || res.Total == nil || res.Total.CostUSD != 0.75 || res.Total.Turns != 5 || res.Total.Model != "model-a" {
		t.Errorf("plan usage %+v, total %+v", res.Usage, res.Total)
	}
	body := h.gh.statusBody(n)
	for _, s := range []string{
		"### Agent usage", "| research | 3 | — | 1200 (200) | 300 | $0.2500 | model-a |", "| plan | 2 |",
		"| **total** | | 5 | — | 2000 (200) | 400 | $0.7500 | model-a |",
		"Budgets: $1.50 per step (`agent.max_cost`); 20,000 tokens per step (`agent.max_tokens`); $5.00 for this issue (`budget.issue`), of which $0.7500 is spent.",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("status comment lacks %q:\n%s", s, body)
		}
	}
	if rec := h.gh.record(t, n); rec.Usage == nil || rec.Usage.CostUSD != 0.75 || rec.Last.Usage == nil || rec.Last.Usage.CostUSD != 0.5 {
		t.Errorf("record usage %+v, last %+v", rec.Usage, rec.Last)
	}
}

// TestFlowTurnLimit: an agent stopped at its turn limit has not failed by that alone: a whole document
// counts; a missing one fails the step, and the failure says the turn limit is the likely cause.
func TestFlowTurnLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Agent.MaxTurns = 7 })
	limited := func(doc string) behaviour {
		return func(a *agentRun) (agentResult, error) {
			if doc != "" {
				a.artifact(doc)
			}
			return agentResult{ExitCode: 1, Usage: &agent.Usage{Turns: 7, HitTurnLimit: true}}, agentErr
		}
	}
	h.agent.set("research", limited(researchDoc))
	h.agent.set("plan", limited(""))
	n := h.enrolled("Parse widgets")
	if res := h.advance(n); res.State != workflow.ReadyForPlan {
		t.Errorf("research Result = %+v", res)
	}
	if !h.log.has("stopped at its turn limit (agent.max_turns: 7); keeping what it produced") {
		t.Errorf("log: %v", h.log.lines)
	}
	_, err := h.eng.Advance(context.Background(), n)
	if se := stepError(err); se == nil || !strings.Contains(se.Reason, "(the agent stopped at its turn limit, agent.max_turns: 7;") {
		t.Errorf("plan error = %v", err)
	}
	if !strings.Contains(h.gh.statusBody(n), "turn limit hit") {
		t.Errorf("status comment:\n%s", h.gh.statusBody(n))
	}
}

var agentErr = errFixed("exit status 1")

type errFixed string

func (e errFixed) Error() string { return string(e) }

// TestFlowOverCost: an agent stopped for going over agent.max_cost (as it reported it) fails its step.
func TestFlowOverCost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Agent.MaxCost = 1 })
	h.agent.set("research", func(*agentRun) (agentResult, error) {
		return agentResult{ExitCode: -1, Usage: &agent.Usage{CostUSD: 1.2, OverBudget: true}}, agentErr
	})
	n := h.enrolled("Parse widgets")
	_, err := h.eng.Advance(context.Background(), n)
	if se := stepError(err); se == nil || se.Reason != "the agent was stopped: the cost it reported ($1.2000) went over agent.max_cost ($1.00)" {
		t.Errorf("error = %v", err)
	}
}

// gatewayOn turns ralph's model gateway on for a command agent that speaks Anthropic's API.
func gatewayOn(h *harness, upstream string) {
	h.eng.Config.Gateway.Enabled, h.eng.Config.Gateway.Vendor, h.eng.Config.Gateway.Upstream = true, "anthropic", upstream
	h.eng.AgentEnv = append(h.eng.AgentEnv, "ANTHROPIC_API_KEY=sk-ant-model-key-0123456789")
}

// TestFlowBudgetSpentBefore: a day's budget already spent stops the step before the agent runs, and a
// person is needed; without its key or its ledger the gateway cannot run the step.
func TestFlowBudgetSpentBefore(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Budget.Day = 1 })
	gatewayOn(h, "")
	h.eng.Ledger = &fakeLedger{day: ledger.Day{Date: day, CostUSD: 2}}
	n := h.enrolled("Parse widgets")
	res := h.advance(n)
	if res.Budget != "budget.day" || res.State != workflow.HumanNeeded || !res.Paused || res.Step != workflow.Research {
		t.Errorf("Result = %+v", res)
	}
	if len(h.agent.commands()) != 0 {
		t.Errorf("the agent ran: %v", h.agent.commands())
	}
	cs := h.gh.commentsStarting(n, "### ralph: the model budget is reached, a person is needed")
	if len(cs) != 1 || !strings.Contains(cs[0], "wait for the next UTC day, or raise `budget.day`") {
		t.Errorf("budget comments: %q", cs)
	}
	rec := h.gh.record(t, n)
	if rec.Before != workflow.ResearchNeeded || rec.Failures != 0 || rec.Last.Outcome != "budget reached" {
		t.Errorf("record: before %s, failures %d, last %+v", rec.Before, rec.Failures, rec.Last)
	}

	// No ledger: the day's spending cannot be read.
	h2 := newHarness(t, func(c *config.Config) { c.Budget.Day = 1 })
	gatewayOn(h2, "")
	m := h2.enrolled("Parse widgets")
	if _, err := h2.eng.Advance(context.Background(), m); stepError(err) == nil || !strings.Contains(err.Error(), "budget.day") {
		t.Errorf("without a ledger: %v", err)
	}
	// No key: the gateway has nothing to forward with.
	h2.eng.AgentEnv = h2.eng.AgentEnv[:2]
	h2.eng.Ledger = &fakeLedger{}
	if _, err := h2.eng.Advance(context.Background(), m); stepError(err) == nil || !strings.Contains(err.Error(), "has no anthropic key") {
		t.Errorf("without a key: %v", err)
	}
}

// TestFlowBudgetReachedMidStep: the gateway refuses the agent's requests once a step's token budget is
// reached; the whole document the agent wrote is kept on the branch, the issue goes to a person, and a
// retry posts the document without running the agent again.
func TestFlowBudgetReachedMidStep(t *testing.T) {
	t.Parallel()
	model := agenttest.NewAnthropic(t, "sk-ant-model-key-0123456789", "", "")
	h := newHarness(t, func(c *config.Config) { c.Agent.MaxTokens = 500; c.Budget.Day = 100 })
	gatewayOn(h, model.URL)
	ldg := &fakeLedger{}
	h.eng.Ledger = ldg
	var answers []int
	h.agent.set("research", func(a *agentRun) (agentResult, error) {
		if a.inv.Gateway == nil {
			t.Fatalf("the agent got no gateway")
		}
		answers = askModel(t, a, 2)
		a.artifact(researchDoc)
		return ok()
	})
	n := h.enrolled("Parse widgets")
	res := h.advance(n)
	if len(answers) != 2 || answers[0] != 200 || answers[1] == 200 {
		t.Errorf("the gateway answered %v, want 200 then a refusal", answers)
	}
	if res.Budget != "agent.max_tokens" || res.State != workflow.HumanNeeded {
		t.Fatalf("Result = %+v", res)
	}
	if res.Usage == nil || !res.Usage.Metered || res.Usage.Requests != 1 || res.Usage.InputTokens != agenttest.InputTokens {
		t.Errorf("usage = %+v", res.Usage)
	}
	if ldg.day.CostUSD <= 0 {
		t.Errorf("the day's ledger was not charged: %+v", ldg.day)
	}
	branch := branchOf(n, "parse-widgets")
	if got := h.subjects(branch); len(got) != 1 || got[0] != "ralph: research for #1 Parse widgets" {
		t.Errorf("commits = %q", got)
	}
	if cs := h.gh.commentsStarting(n, "### ralph: the model budget is reached"); len(cs) != 1 || !strings.Contains(cs[0], "The document was whole") {
		t.Errorf("budget comments: %q", cs)
	}
	if _, err := h.eng.Retry(context.Background(), n, "alice"); err != nil {
		t.Fatal(err)
	}
	res = h.advance(n)
	if res.Step != workflow.Research || res.State != workflow.ReadyForPlan || len(h.agent.commands()) != 1 {
		t.Errorf("after retry: Result = %+v, agent runs %v", res, h.agent.commands())
	}
	if got := len(h.gh.commentsStarting(n, "## Research Document")); got != 1 {
		t.Errorf("research comments: %d", got)
	}
}

// askModel makes k model requests through the run's gateway, as an agent would, and returns the answers'
// status codes.
func askModel(t *testing.T, a *agentRun, k int) []int {
	t.Helper()
	var answers []int
	for i := 0; i < k; i++ {
		req, _ := http.NewRequestWithContext(a.ctx, http.MethodPost, a.inv.Gateway.URL+"/v1/messages",
			strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Api-Key", a.inv.Gateway.Key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("model request %d: %v", i, err)
			continue
		}
		// Read to the end, as a client does: the gateway meters the answer as it passes.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answers = append(answers, resp.StatusCode)
	}
	return answers
}

// TestFlowBudgetReachedMidPhase: a phase stopped at a budget is kept when it is a whole, verified change:
// committed with the phase's key and pushed, so that a retry goes on with the next phase.
func TestFlowBudgetReachedMidPhase(t *testing.T) {
	t.Parallel()
	model := agenttest.NewAnthropic(t, "sk-ant-model-key-0123456789", "", "")
	h, n := implementing(t, nil)
	h.eng.Config.Agent.MaxTokens = 500
	gatewayOn(h, model.URL)
	h.agent.set("implement", func(a *agentRun) (agentResult, error) {
		askModel(t, a, 2)
		a.file("phase1.txt", "phase 1\n")
		return ok()
	})
	res := h.advance(n)
	if res.Budget != "agent.max_tokens" || res.State != workflow.HumanNeeded || res.Step != workflow.Implement {
		t.Fatalf("Result = %+v", res)
	}
	branch := branchOf(n, "parse-widgets")
	if got := h.subjects(branch); len(got) != 2 || got[1] != "ralph: Phase 1 of 2: #1 Add the parser" {
		t.Errorf("commits = %q", got)
	}
	if cs := h.gh.commentsStarting(n, "### ralph: the model budget is reached"); len(cs) != 1 || !strings.Contains(cs[0], "passed verify and are committed") {
		t.Errorf("budget comments: %q", cs)
	}
	if _, err := h.eng.Retry(context.Background(), n, "alice"); err != nil {
		t.Fatal(err)
	}
	// The retry finds phase 1 on the branch by its key; the agent is not run for it again.
	h.eng.Config.Agent.MaxTokens = 0
	res = h.advance(n)
	if res.Message != "phase 1 of 2 done" || len(h.agent.commands()) != 2 {
		t.Errorf("after retry: Result = %+v, agent runs %v", res, h.agent.commands())
	}
}
