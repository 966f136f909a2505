package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// nano is the price the tests give opencode's small OpenAI model (gateway.prices).
func nano() gateway.Price { return gateway.Price{Input: 0.05, Output: 0.4, CacheRead: 0.005} }

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
	u := researchRecorded(t, e, r, "opencode", content, append(oai.Problems(), ant.Problems()...))
	// The agent's turns at gpt-5.2's price, its side requests (the title) at gpt-5.4-nano's.
	b := oai.Billed()
	turns, side := oai.Turns(), b.Requests-oai.Turns()
	want := float64(turns)*price(t, gateway.OpenAI, "gpt-5.2") + float64(side)*nano().Cost(gateway.Tokens{Input: agenttest.InputTokens, CacheRead: agenttest.CachedTokens, Output: agenttest.OutputTokens})
	if turns != 2 || side < 1 || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens || u.OutputTokens != b.OutputTokens ||
		math.Abs(u.CostUSD-want) > 1e-9 {
		t.Errorf("recorded usage %+v; the OpenAI model answered %d turns and %d side requests and billed %+v: want $%.6f", u, turns, side, b, want)
	}
	// Its small model (the title) is OpenAI's too: Anthropic's model is asked nothing.
	if ant.Billed().Requests != 0 {
		t.Errorf("the Anthropic model was asked %d requests", ant.Billed().Requests)
	}
}

// TestPresetOpencodeRealCLIVendors: opencode talks to both vendors in one run, its main model OpenAI's and
// its small model (the session's title, from the repository's opencode.json) Anthropic's; each reaches its
// scripted model through ralph's gateway with ralph's key for that vendor, each is metered at its own
// prices, and the record holds their sum, the log each vendor's share. The agent holds neither vendor's
// key, though agent.env names both: the repository's opencode.json puts what opencode's environment holds
// under those names into its system prompt ({env:…}), and the models see only the gateway's key there.
func TestPresetOpencodeRealCLIVendors(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by opencode on two vendors' models for ralph.\n"
	repoConfig := `{"small_model": "anthropic/claude-haiku-4-5", "agent": {"build": {"prompt": "Keys: openai={env:OPENAI_API_KEY} anthropic={env:ANTHROPIC_API_KEY}."}}}` + "\n"
	e, oai, ant, r := opencodeVendors(t, content, repoConfig, "  env:\n    OPENAI_API_KEY: \"\"\n    ANTHROPIC_API_KEY: \"\"\n")
	u := researchRecorded(t, e, r, "opencode", content, append(oai.Problems(), ant.Problems()...))
	bo, ba := oai.Billed(), ant.Billed()
	// The agent's turns on OpenAI's gpt-5.2, its title on Anthropic's claude-haiku-4-5, none the other way.
	if oai.Turns() != 2 || bo.Requests != 2 || ant.Turns() != 0 || ba.Requests < 1 {
		t.Fatalf("OpenAI answered %d turns of %d requests, Anthropic %d turns of %d requests: want the agent on OpenAI, the title on Anthropic\n%s",
			oai.Turns(), bo.Requests, ant.Turns(), ba.Requests, r.stdout)
	}
	oaiCost := float64(bo.Requests) * price(t, gateway.OpenAI, "gpt-5.2")
	antCost := float64(ba.Requests) * price(t, gateway.Anthropic, "claude-haiku-4-5")
	if !u.Metered || u.Requests != bo.Requests+ba.Requests || u.InputTokens != bo.InputTokens+ba.InputTokens ||
		u.OutputTokens != bo.OutputTokens+ba.OutputTokens || math.Abs(u.CostUSD-oaiCost-antCost) > 1e-9 {
		t.Errorf("recorded usage %+v; OpenAI billed %+v ($%.6f), Anthropic %+v ($%.6f)", u, bo, oaiCost, ba, antCost)
	}
	keys := regexp.MustCompile(`Keys: openai=(\S*) anthropic=(\S*)\.`)
	var prompts int
	for _, body := range append(oai.Seen(), ant.Seen()...) {
		if strings.Contains(body, openaiKey) || strings.Contains(body, modelKey) {
			t.Errorf("a vendor's real key reached the agent: a request holds it")
		}
		if m := keys.FindStringSubmatch(body); m != nil {
			prompts++
			if !strings.HasPrefix(m[1], "ralph-gw-") || m[1] != m[2] {
				t.Errorf("the agent's OPENAI_API_KEY is %q, its ANTHROPIC_API_KEY %q: want the gateway's key for both", m[1], m[2])
			}
		}
	}
	if prompts == 0 {
		t.Errorf("no request carries the system prompt of the repository's opencode.json: the test shows nothing")
	}
	for _, want := range []string{
		fmt.Sprintf("ralph's model gateway metered the openai API: %d requests, %d in / %d out tokens, $%.4f", bo.Requests, bo.InputTokens, bo.OutputTokens, oaiCost),
		fmt.Sprintf("ralph's model gateway metered the anthropic API: %d requests, %d in / %d out tokens, $%.4f", ba.Requests, ba.InputTokens, ba.OutputTokens, antCost),
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the log does not say %q:\n%s", want, r.stdout)
		}
	}
}

// TestPresetOpencodeRealCLIVendorsBudget: the run has one budget whichever vendor spends it. At
// agent.max_cost below half of the cheaper answer (Anthropic's small model for the title, or OpenAI's for
// the agent's turn, whichever opencode sends first), the first answers cross it; then every request is
// refused, to either vendor, the agent's second turn among them, and the issue goes to a person with the
// figures of both vendors.
func TestPresetOpencodeRealCLIVendorsBudget(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten before the budget was reached.\n"
	maxCost := min(price(t, gateway.OpenAI, "gpt-5.2"), price(t, gateway.Anthropic, "claude-haiku-4-5")) / 2
	e, oai, ant, r := opencodeVendors(t, content, `{"small_model": "anthropic/claude-haiku-4-5"}`+"\n", "  max_cost: "+ftoa(maxCost)+"\n")
	if r.exit != 0 || r.outputs["state"] != "human-needed" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if oai.Turns() > 1 || ant.Turns() != 0 {
		t.Errorf("the OpenAI model answered %d agent turns, Anthropic's %d: want at most the first, the gateway refuses the rest", oai.Turns(), ant.Turns())
	}
	billed := oai.Billed().Requests + ant.Billed().Requests
	rec := e.record(1)
	if !strings.Contains(rec.Reason, "raise `agent.max_cost`") || rec.Usage == nil || rec.Usage.Requests != billed || billed == 0 || rec.Usage.CostUSD < maxCost {
		t.Errorf("the record: %s, %+v; the models billed %d requests", rec.Reason, rec.Usage, billed)
	}
	if !strings.Contains(r.stdout, "budget is reached") || !strings.Contains(r.stdout, "ralph: budget reached") {
		t.Errorf("the log does not show the gateway refusing past the budget:\n%s", r.stdout)
	}
}
