package e2e

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// nano is the price the tests give opencode's small OpenAI model.
var nano = gateway.Price{Input: 0.05, Output: 0.4, CacheRead: 0.005}

// openaiKey is the OpenAI key ralph holds in these tests; the scripted model takes no other.
const openaiKey = "sk-proj-ralphs-own-openai-key-0123456789"

// price is what one scripted answer of model costs at the built-in prices of vendor.
func price(t testing.TB, vendor gateway.Vendor, model string) float64 {
	t.Helper()
	p, _, known := gateway.DefaultPrices(vendor).For(model)
	if !known {
		t.Fatalf("%s has no price", model)
	}
	return p.Cost(gateway.Tokens{Input: agenttest.InputTokens, CacheRead: agenttest.CachedTokens, Output: agenttest.OutputTokens})
}

// opencodeVendors runs research with opencode whose main model is OpenAI's (agent.model: openai/…), with a
// scripted OpenAI model behind ralph's gateway, and, when repoConfig is set, that opencode.json committed
// to the repository (a small model of Anthropic's for the session's title, say) and a scripted Anthropic
// model behind it too. ralph holds both keys; the agent holds neither.
func opencodeVendors(t *testing.T, content, repoConfig string, agentExtra string) (*env, *agenttest.OpenAI, *agenttest.Anthropic, result) {
	t.Helper()
	bin := agentsBin(t, "opencode")
	oai := agenttest.NewOpenAI(t, openaiKey, "", content)
	ant := agenttest.NewAnthropic(t, modelKey, "", content)
	e := newEnv(t, "agent:\n  preset: opencode\n  model: openai/gpt-5.2\n  max_turns: 10\n  timeout: 3m\n"+agentExtra+
		"gateway:\n  upstreams:\n    anthropic: "+ant.URL+"\n    openai: "+oai.URL+"\n"+
		// opencode's small model for OpenAI, which the built-in table does not price.
		"  prices:\n    gpt-5.4-nano: {input: 0.05, output: 0.4, cache_read: 0.005}\n")
	if repoConfig != "" {
		dir := filepath.Join(t.TempDir(), "edit")
		e.git("", "clone", "-q", e.srv.BareRepo, dir)
		if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(repoConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		e.git(dir, "add", "opencode.json")
		e.git(dir, "-c", "user.name=Mona", "-c", "user.email=mona@example.com", "commit", "-q", "-m", "opencode's small model")
		e.git(dir, "push", "-q", "origin", "HEAD:main")
	}
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	p := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{env: map[string]string{
		"PATH":              bin + ":" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": modelKey,
		"OPENAI_API_KEY":    openaiKey,
	}})
	return e, oai, ant, p.wait()
}

// TestPresetOpencodeRealCLIOpenAI: with agent.model openai/…, the real opencode's openai provider reaches
// the scripted OpenAI model through ralph's gateway (the Responses API), writes the research document with
// its tool, and ralph records what the gateway metered at OpenAI's prices.
func TestPresetOpencodeRealCLIOpenAI(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by opencode on an OpenAI model for ralph.\n"
	e, oai, ant, r := opencodeVendors(t, content, "", "")
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	for _, p := range append(oai.Problems(), ant.Problems()...) {
		t.Errorf("scripted model: %s", p)
	}
	e.wantState(1, workflow.ReadyForPlan)
	_, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 {
		t.Fatalf("no research document on the branch: %v\n%s", files, r.stdout)
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]); got+"\n" != content {
		t.Errorf("the committed document = %q, want what the model had opencode write", got)
	}
	rec, ok, err := engine.ParseRecord(e.statusComment(1))
	if err != nil || !ok || rec.Usage == nil {
		t.Fatalf("no usage in the record: %v %v", ok, err)
	}
	// The agent's turns at gpt-5.2's price, its side requests (the title) at gpt-5.4-nano's.
	u, b := *rec.Usage, oai.Billed()
	turns, side := oai.Turns(), b.Requests-oai.Turns()
	want := float64(turns)*price(t, gateway.OpenAI, "gpt-5.2") + float64(side)*nano.Cost(gateway.Tokens{Input: agenttest.InputTokens, CacheRead: agenttest.CachedTokens, Output: agenttest.OutputTokens})
	if turns != 2 || side < 1 || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens || u.OutputTokens != b.OutputTokens ||
		math.Abs(u.CostUSD-want) > 1e-9 {
		t.Errorf("recorded usage %+v; the OpenAI model answered %d turns and %d side requests and billed %+v: want $%.6f", u, turns, side, b, want)
	}
	// Its small model (the title) is OpenAI's too: Anthropic's model is asked nothing.
	if ant.Billed().Requests != 0 {
		t.Errorf("the Anthropic model was asked %d requests", ant.Billed().Requests)
	}
}
