package e2e

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// modelKey is the model key ralph holds in these tests: the scripted model accepts only it.
const modelKey = "sk-ant-api03-ralphs-own-key-0123456789"

// perAnswer is what one answer of the scripted model costs at the built-in price of its model.
func perAnswer(t testing.TB) float64 {
	t.Helper()
	p, _, known := gateway.DefaultPrices(gateway.Anthropic).For("claude-sonnet-4-5")
	if !known {
		t.Fatal("claude-sonnet-4-5 has no price")
	}
	return p.Cost(gateway.Tokens{Input: agenttest.InputTokens, CacheRead: agenttest.CachedTokens, Output: agenttest.OutputTokens})
}

// gatewayEnv is a repository whose agent is the scripted command agent, given ralph's model gateway for the
// Anthropic API (gateway.vendor), with the scripted model behind it; extra is more of the config. agent.env
// names ANTHROPIC_API_KEY, as a config from before the gateway did: ralph must not pass it on.
func gatewayEnv(t *testing.T, extraAgent, extra string) (*env, *agenttest.Anthropic) {
	t.Helper()
	model := agenttest.NewAnthropic(t, modelKey, "", "unused")
	e := newEnv(t, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n  timeout: 2m\n"+extraAgent+
		"  env:\n    RALPH_TEST_CONTROL: \"\"\n    RALPH_TEST_MODELCALL: "+yamlQuote(modelcall)+"\n    ANTHROPIC_API_KEY: \"\"\n"+
		"verify:\n  - test -f README.md\n  - env > \"$RALPH_TEST_CONTROL/verify-env\"\n"+
		"gateway:\n  vendor: anthropic\n  upstream: "+model.URL+"\n"+extra)
	e.extra = map[string]string{"ANTHROPIC_API_KEY": modelKey}
	return e, model
}

// setConfig pushes a new .github/ralph.yml to main, as a person raising a budget does.
func (e *env) setConfig(configYAML string) {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), "edit")
	e.git("", "clone", "-q", e.srv.BareRepo, dir)
	if err := os.WriteFile(filepath.Join(dir, ".github", "ralph.yml"), []byte(configYAML), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git(dir, "-c", "user.name=Mona", "-c", "user.email=mona@example.com", "commit", "-q", "-am", "raise the budget")
	e.git(dir, "push", "-q", "origin", "HEAD:main")
}

// The model key stays with ralph: the agent, which agent.env would have handed it, gets the gateway's key
// instead, and the real key is in none of its variables, files and processes (nor any it can read); it
// reaches its model through the gateway with the documented variables, the gateway refuses a path that is
// not the model's, and the usage recorded is what the model billed.
func TestGatewayHoldsTheKey(t *testing.T) {
	t.Parallel()
	e, model := gatewayEnv(t, "", "")
	e.setControl("extra_research", `set -e
ctl="$RALPH_TEST_CONTROL"
env > "$ctl/agent-env"
for p in /proc/[0-9]*; do tr '\0' ' ' < "$p/cmdline" 2>/dev/null || true; echo; done > "$ctl/agent-ps"
cat /proc/[0-9]*/environ > "$ctl/agent-environs" 2>/dev/null || true
find "$HOME" "$TMPDIR" . -type f -size -10M -exec cat {} + > "$ctl/agent-files" 2>/dev/null || true
"$RALPH_TEST_MODELCALL" message > "$ctl/agent-model" 2>&1
"$RALPH_TEST_MODELCALL" get /v1/models > "$ctl/agent-refused" 2>&1 || true
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	r := e.label(n, maintainer)
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)

	agentEnv := readControl(t, e, "agent-env")
	for _, want := range []string{"ANTHROPIC_API_KEY=ralph-gw-", "RALPH_GATEWAY_KEY=ralph-gw-", "RALPH_GATEWAY_URL=http://127.0.0.1:", "ANTHROPIC_BASE_URL=http://127.0.0.1:", "RALPH_GATEWAY_VENDOR=anthropic"} {
		if !strings.Contains(agentEnv, want) {
			t.Errorf("the agent's environment lacks %q:\n%s", want, agentEnv)
		}
	}
	if ps := readControl(t, e, "agent-ps"); !strings.Contains(ps, "agent.sh") {
		t.Errorf("the agent did not see its own processes:\n%s", ps)
	}
	for _, f := range []string{"agent-env", "agent-ps", "agent-environs", "agent-files"} {
		if strings.Contains(readControl(t, e, f), modelKey) {
			t.Errorf("the model key is in what the agent could read: %s", f)
		}
	}
	if got := readControl(t, e, "agent-model"); !strings.HasPrefix(got, "modelcall: 200 ") {
		t.Errorf("the agent's model request through the gateway: %s", got)
	}
	for _, p := range model.Problems() {
		t.Errorf("scripted model: %s", p) // among them: a request without ralph's key
	}
	// Only the model: anything else gets 403, and a line in ralph's log.
	if got := readControl(t, e, "agent-refused"); !strings.HasPrefix(got, "modelcall: 403 ") {
		t.Errorf("a request for /v1/models: %s", got)
	}
	if !strings.Contains(r.stdout, "refused GET /v1/models: not a model API path ralph forwards") {
		t.Errorf("the log does not say what the gateway refused:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr+r.summary+e.statusComment(n), modelKey) {
		t.Errorf("the model key is in ralph's log, summary or status comment")
	}

	// The figures are the gateway's, equal to what the model billed.
	b := model.Billed()
	u := e.record(n).Usage
	if u == nil || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens || u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens ||
		math.Abs(u.CostUSD-float64(b.Requests)*perAnswer(t)) > 1e-9 || b.Requests != 1 {
		t.Errorf("recorded usage %+v; the model billed %+v at $%.6f each", u, b, perAnswer(t))
	}
	if !strings.Contains(r.summary, "model requests") || !strings.Contains(r.summary, "as ralph's model gateway metered them") {
		t.Errorf("the step summary does not show the gateway's figures:\n%s", r.summary)
	}
	if !strings.Contains(e.statusComment(n), "what ralph's model gateway metered") {
		t.Errorf("the status comment does not say whose figures they are")
	}
}

// agent.max_cost stops the research step mid-way: the agent's second model request is refused with the
// reason, which it shows; the document as written so far is kept on the branch; the issue goes to a person
// with the figures and what to raise. Raised, /ralph retry goes on from the kept document without running
// the agent again.
func TestBudgetPerStep(t *testing.T) {
	t.Parallel()
	step := perAnswer(t) / 2 // the first answer reaches it
	cfg := "  max_cost: " + ftoa(step) + "\n"
	e, model := gatewayEnv(t, cfg, "")
	e.setControl("extra_research", `set -e
printf '\nWhat the model said, part one.\n' >> "$RALPH_ARTIFACT"
"$RALPH_TEST_MODELCALL" message
"$RALPH_TEST_MODELCALL" message
printf 'Part two, never written.\n' >> "$RALPH_ARTIFACT"
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	r := e.label(n, maintainer)
	if r.exit != 0 || r.outputs["state"] != "human-needed" || r.outputs["paused"] != "true" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.HumanNeeded)
	if b := model.Billed(); b.Requests != 1 {
		t.Errorf("the model answered %d requests, want 1: the second was refused", b.Requests)
	}
	if !strings.Contains(r.stdout, "modelcall: 400 ") || !strings.Contains(r.stdout, "ralph: budget reached, no more model requests in this step: agent.max_cost is $") {
		t.Errorf("the agent was not told why:\n%s", r.stdout)
	}
	// The document so far is on the branch, committed as the step's.
	subjects, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 || subjects[0] != "ralph: research for #1 Add a greeting" {
		t.Fatalf("the document was not kept: %v %v", subjects, files)
	}
	if got, want := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]), "# Research: scripted\n\nThe code lives in README.md.\n\nWhat the model said, part one."; got != want {
		t.Errorf("the kept document = %q, want %q", got, want)
	}
	if e.commentsStarting(n, "## Research Document") != 0 {
		t.Errorf("the document was posted as if the step were done")
	}
	rec := e.record(n)
	for _, want := range []string{"agent.max_cost is $", "This step spent $", "1 model request", "The document was whole when the agent was stopped", "raise `agent.max_cost`", "/ralph retry"} {
		if !strings.Contains(rec.Reason, want) {
			t.Errorf("the reason lacks %q: %s", want, rec.Reason)
		}
	}
	if rec.Last == nil || rec.Last.Outcome != "budget reached" || rec.Usage == nil || rec.Usage.Requests != 1 || rec.Last.Usage.Budget != "agent.max_cost" || rec.Failures != 0 {
		t.Errorf("the record: last %+v, total %+v, failures %d", rec.Last, rec.Usage, rec.Failures)
	}
	if e.commentsStarting(n, "### ralph: the model budget is reached") != 1 {
		t.Errorf("no comment says the budget is reached")
	}
	if !strings.Contains(r.summary, "stopped at agent.max_cost") {
		t.Errorf("the step summary does not say the budget stopped the step:\n%s", r.summary)
	}

	// A person raises the budget and retries: the kept document is posted, the agent does not run again.
	before := len(e.invocations())
	e.setConfig(strings.Replace(readConfig(t, e), cfg, "  max_cost: 5\n", 1))
	if r := e.comment(n, "/ralph retry", maintainer); r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("retry: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if len(e.invocations()) != before || e.commentsStarting(n, "## Research Document") != 1 {
		t.Errorf("the retry ran the agent again (%d → %d invocations) or did not post the document", before, len(e.invocations()))
	}
}

// agent.max_tokens stops an implement step mid-way; the phase's changes pass verify, so they are kept as
// the phase's commit, and the issue goes to a person.
func TestBudgetKeepsVerifiedPhase(t *testing.T) {
	t.Parallel()
	e, _ := gatewayEnv(t, "  max_tokens: 1\n", "research: false\nreview: skip\nself_review: false\n")
	e.setControl("phases", "2")
	e.setControl("extra_implement", `set -e
"$RALPH_TEST_MODELCALL" message
"$RALPH_TEST_MODELCALL" message
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 || r.outputs["step"] != "plan" {
		t.Fatalf("plan: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	rs := e.chain(5)
	last := rs[len(rs)-1]
	if last.outputs["step"] != "implement" || last.outputs["state"] != "human-needed" {
		t.Fatalf("the chain ended with %v\n%s", last.outputs, last.stdout)
	}
	subjects, files := e.branch(branch)
	if subjects[0] != "ralph: Phase 1 of 2: #1 Step 1" || !slices.Contains(files, "feature-1.txt") {
		t.Errorf("the verified phase was not kept: %v %v", subjects, files)
	}
	// verify runs the agent's code: it gets neither the model key nor the gateway.
	if v := readControl(t, e, "verify-env"); strings.Contains(v, modelKey) || strings.Contains(v, "ANTHROPIC_API_KEY=") || strings.Contains(v, "RALPH_GATEWAY") {
		t.Errorf("verify's environment:\n%s", v)
	}
	rec := e.record(n)
	if !strings.Contains(rec.Reason, "agent.max_tokens is 1 tokens per step") || !strings.Contains(rec.Reason, "Phase 1 of 2's changes passed verify and are committed") {
		t.Errorf("the reason: %s", rec.Reason)
	}
}

// budget.issue counts all of an issue's runs: research spends some, the plan step spends the rest and is
// stopped mid-way (its unfinished plan kept as a draft, not as the step's); a retry without a higher budget
// does not run the agent at all.
func TestBudgetPerIssue(t *testing.T) {
	t.Parallel()
	e, model := gatewayEnv(t, "", "budget:\n  issue: "+ftoa(1.5*perAnswer(t))+"\n")
	e.setControl("extra_research", `"$RALPH_TEST_MODELCALL" message`)
	e.setControl("extra_plan", `set -e
printf '# Plan: scripted\n\nUnfinished: the phases come next.\n' > "$RALPH_ARTIFACT"
"$RALPH_TEST_MODELCALL" message
"$RALPH_TEST_MODELCALL" message
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	if r := e.label(n, maintainer); r.exit != 0 || r.outputs["state"] != "ready-for-plan" {
		t.Fatalf("research within the budget: exit %d outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
	rs := e.chain(3)
	if len(rs) != 1 || rs[0].outputs["step"] != "plan" || rs[0].outputs["state"] != "human-needed" {
		t.Fatalf("the plan step: %d runs, last %v", len(rs), rs[len(rs)-1].outputs)
	}
	if b := model.Billed(); b.Requests != 2 {
		t.Errorf("the model answered %d requests, want 2 (one a step)", b.Requests)
	}
	rec := e.record(n)
	if rec.Usage == nil || rec.Usage.Requests != 2 || math.Abs(rec.Usage.CostUSD-2*perAnswer(t)) > 1e-9 {
		t.Errorf("the issue's total = %+v, want both steps' requests", rec.Usage)
	}
	for _, want := range []string{"budget.issue is $", "which had spent $", "unfinished", "raise `budget.issue`"} {
		if !strings.Contains(rec.Reason, want) {
			t.Errorf("the reason lacks %q: %s", want, rec.Reason)
		}
	}
	// The unfinished plan is on the branch for a person to read, marked as a draft: no step's commit.
	subjects, _ := e.branch(branch)
	if subjects[0] != "ralph: plan for #1 Add a greeting (unfinished: the budget was reached)" {
		t.Errorf("branch head = %q, want the draft of the plan", subjects[0])
	}
	if body := e.git(e.srv.BareRepo, "log", "-1", "--format=%B", "refs/heads/"+branch); !strings.Contains(body, "Ralph-Draft: plan/0") || strings.Contains(body, "Ralph-Step:") {
		t.Errorf("the draft's message: %q", body)
	}

	// Retried without raising the budget: spent, so the agent does not run, and a person is needed again.
	before := len(e.invocations())
	r := e.comment(n, "/ralph retry", maintainer)
	if r.exit != 0 || r.outputs["state"] != "human-needed" || len(e.invocations()) != before {
		t.Fatalf("retry on a spent budget: exit %d outputs %v, invocations %d → %d\n%s", r.exit, r.outputs, before, len(e.invocations()), r.stdout)
	}
	if rec := e.record(n); !strings.Contains(rec.Reason, "The model budget is spent, so the agent did not run: budget.issue") {
		t.Errorf("the reason: %s", rec.Reason)
	}
}

// budget.day counts every issue's runs in the repository in a UTC day, through the ledger ref: one issue's
// research spends most of it, another's is stopped mid-way, and the ref holds both.
func TestBudgetPerDay(t *testing.T) {
	t.Parallel()
	e, model := gatewayEnv(t, "", "budget:\n  day: "+ftoa(1.5*perAnswer(t))+"\n")
	e.setControl("extra_research", `set -e
"$RALPH_TEST_MODELCALL" message
if [ "$RALPH_ISSUE" = 2 ]; then "$RALPH_TEST_MODELCALL" message; fi
`)
	one := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(one, maintainer); r.exit != 0 || r.outputs["state"] != "ready-for-plan" {
		t.Fatalf("#1's research: %v\n%s", r.outputs, r.stdout)
	}
	two := e.srv.CreateIssue("octocat", "Add a farewell", "")
	r := e.label(two, maintainer)
	if r.exit != 0 || r.outputs["state"] != "human-needed" {
		t.Fatalf("#2's research at the day's budget: exit %d outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
	if b := model.Billed(); b.Requests != 2 {
		t.Errorf("the model answered %d requests, want 2", b.Requests)
	}
	for _, want := range []string{"budget.day is $", "a day for the repository", "wait for the next UTC day, or raise `budget.day`"} {
		if rec := e.record(two); !strings.Contains(rec.Reason, want) {
			t.Errorf("the reason lacks %q: %s", want, rec.Reason)
		}
	}
	msg := e.git(e.srv.BareRepo, "log", "-1", "--format=%B", ledger.Ref)
	if !strings.Contains(msg, `"runs":2`) || !strings.Contains(msg, "#2 research spent $") {
		t.Errorf("the day's ledger: %q", msg)
	}
}

// ftoa writes a budget in the config: dollars with enough decimals for a fraction of a cent.
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 8, 64) }

// readConfig is the config on main.
func readConfig(t *testing.T, e *env) string {
	t.Helper()
	return e.git(e.srv.BareRepo, "show", "refs/heads/main:.github/ralph.yml") + "\n"
}

// A document kept at a budget is committed like any other: one that holds the value of a secret the agent
// holds (here a variable agent.env passes through) is refused, and nothing of it reaches the branch.
func TestBudgetKeepsNoSecret(t *testing.T) {
	t.Parallel()
	const secret = "a-secret-of-the-agents-0123456789"
	e, _ := gatewayEnv(t, "  max_cost: "+ftoa(perAnswer(t)/2)+"\n", "")
	e.setConfig(strings.Replace(e.git(e.srv.BareRepo, "show", "main:.github/ralph.yml"), "  env:\n", "  env:\n    MODEL_SECRET: \"\"\n", 1) + "\n")
	e.extra["MODEL_SECRET"] = secret
	e.setControl("extra_research", `set -e
printf '\nThe secret is %s.\n' "$MODEL_SECRET" >> "$RALPH_ARTIFACT"
"$RALPH_TEST_MODELCALL" message
"$RALPH_TEST_MODELCALL" message
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	r := e.label(n, maintainer)
	if r.outputs["state"] != "human-needed" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
	if e.branchExists(branch) {
		if _, files := e.branch(branch); len(matching(files, `^thoughts/shared/research/`)) != 0 {
			t.Errorf("the document holding the secret was kept: %v", files)
		}
	}
	if !strings.Contains(e.record(n).Reason, "holds the value of MODEL_SECRET") {
		t.Errorf("the reason does not say why the document was not kept: %s", e.record(n).Reason)
	}
	for _, c := range e.srv.Comments(n) {
		if strings.Contains(c.Body, secret) {
			t.Errorf("a comment holds the secret:\n%s", c.Body)
		}
	}
}
