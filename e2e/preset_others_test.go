package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// agentsBin is where .ci/run installs the agent CLIs (RALPH_AGENTS_BIN names another directory); the test
// skips when program is not there.
func agentsBin(t *testing.T, program string) string {
	t.Helper()
	bin := os.Getenv("RALPH_AGENTS_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", ".cache", "agents", "bin"))
	}
	if _, err := os.Stat(filepath.Join(bin, program)); err != nil {
		t.Skipf("%s is not installed in %s: run .ci/run (its \"== agent CLIs\" step installs it) or set RALPH_AGENTS_BIN", program, bin)
	}
	return bin
}

// presetResearch runs the label run of a new issue through the built binary with the given config and
// extra environment, and checks what every preset must do there: the document the scripted model had the
// CLI write is committed and posted, the model got ralph's key (checked by the model), and the usage
// recorded is what ralph's model gateway metered: what the model billed.
func presetResearch(t *testing.T, configYAML string, env map[string]string, turns func() int, problems func() []string, billed func() agenttest.Billed, content string) *env {
	t.Helper()
	e := newEnv(t, configYAML)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{env: env}).wait()
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	for _, p := range problems() {
		t.Errorf("scripted model: %s", p)
	}
	e.wantState(n, workflow.ReadyForPlan)
	_, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 {
		t.Fatalf("no research document on the branch: %v", files)
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]); got+"\n" != content {
		t.Errorf("the committed document = %q, want %q", got, content)
	}
	rec, _, _ := record.Parse(e.statusComment(n))
	b := billed()
	if u := rec.Usage; u == nil || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens || u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens || u.Turns != turns() || u.CostUSD <= 0 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v", rec.Usage, turns(), b)
	}
	return e
}

// TestCodexPresetThroughTheAction: the real Codex CLI reaches a scripted Responses API model through ralph's
// model gateway (gateway.upstream): ralph gives it a model provider of its own, whose key is the gateway's.
func TestCodexPresetThroughTheAction(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "codex")
	const content = "# Research: greeting\n\nWritten by Codex for ralph.\n"
	model := agenttest.NewOpenAI(t, "sk-proj-ralphs-own", "", content)
	cfg := "agent:\n  preset: codex\n  model: gpt-5.1-codex\n  max_turns: 10\n  timeout: 3m\n" +
		"gateway:\n  upstream: " + model.URL + "\n"
	// Codex keeps its state in $CODEX_HOME, by default under HOME: the agent's own.
	presetResearch(t, cfg, map[string]string{
		"PATH": bin + ":" + os.Getenv("PATH"), "OPENAI_API_KEY": "sk-proj-ralphs-own",
	}, model.Turns, model.Problems, model.Billed, content)
}

// TestGeminiPresetThroughTheAction: the real Gemini CLI reaches a scripted Gemini API model through ralph's
// model gateway; ralph's preset gives its fresh HOME the settings that pick the API key (with a base URL set,
// Gemini CLI otherwise expects a gateway login, which headless mode refuses).
func TestGeminiPresetThroughTheAction(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "gemini")
	const content = "# Research: greeting\n\nWritten by Gemini CLI for ralph.\n"
	model := agenttest.NewGemini(t, "AIza-ralphs-own", "", content)
	cfg := "agent:\n  preset: gemini\n  model: gemini-2.5-pro\n  max_turns: 10\n  timeout: 3m\n" +
		"gateway:\n  upstream: " + model.URL + "\n"
	presetResearch(t, cfg, map[string]string{
		"PATH": bin + ":" + os.Getenv("PATH"), "GEMINI_API_KEY": "AIza-ralphs-own",
	}, model.Turns, model.Problems, model.Billed, content)
}
