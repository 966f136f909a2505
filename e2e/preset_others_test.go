package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// agentsBin is where .ci/run installs the agent CLIs (RALPH_AGENTS_BIN names another directory); the test
// skips when program is not there.
func agentsBin(t *testing.T, program string) string {
	t.Helper()
	bin := os.Getenv("RALPH_AGENTS_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", ".cache", "agents", "node_modules", ".bin"))
	}
	if _, err := os.Stat(filepath.Join(bin, program)); err != nil {
		t.Skipf("%s is not installed in %s: run .ci/run (its \"== agent CLIs\" step installs it) or set RALPH_AGENTS_BIN", program, bin)
	}
	return bin
}

// presetResearch runs the label run of a new issue through the built binary with the given agent config
// and extra environment, and checks what every preset must do there: the document the scripted model had
// the CLI write is committed and posted, and the usage it reported is recorded.
func presetResearch(t *testing.T, agentYAML string, env map[string]string, setup func(*env), turns func() int, problems func() []string, content string) {
	t.Helper()
	e := newEnv(t, agentYAML)
	if setup != nil {
		setup(e)
	}
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
	rec, _, _ := engine.ParseRecord(e.statusComment(n))
	if rec.Usage == nil || rec.Usage.InputTokens != turns()*agenttest.InputTokens || rec.Usage.OutputTokens != turns()*agenttest.OutputTokens {
		t.Errorf("recorded usage %+v; the model answered %d turns", rec.Usage, turns())
	}
}

// TestCodexPresetThroughTheAction: the real Codex CLI, pointed at a scripted Responses API model with a
// custom model provider in agent.args (Codex honours no base-URL variable for its own provider).
func TestCodexPresetThroughTheAction(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "codex")
	const content = "# Research: greeting\n\nWritten by Codex for ralph.\n"
	model := agenttest.NewOpenAI(t, "sk-fake", "", content)
	provider := `model_providers.fake={name="fake", base_url="` + model.URL + `/v1", env_key="OPENAI_API_KEY", wire_api="responses"}`
	cfg := "agent:\n  preset: codex\n  model: gpt-5.1-codex\n  max_turns: 10\n  timeout: 3m\n" +
		"  args: [\"-c\", " + yamlQuote(provider) + ", \"-c\", \"model_provider=fake\"]\n" +
		"  env:\n    OPENAI_API_KEY: \"\"\n"
	// Codex keeps its state in $CODEX_HOME, by default under HOME: the agent's own.
	presetResearch(t, cfg, map[string]string{
		"PATH": bin + ":" + os.Getenv("PATH"), "OPENAI_API_KEY": "sk-fake",
	}, nil, model.Turns, model.Problems, content)
}

// TestGeminiPresetThroughTheAction: the real Gemini CLI, pointed at a scripted Gemini API model with
// GOOGLE_GEMINI_BASE_URL. A custom base URL makes Gemini CLI expect a gateway login, which headless mode
// refuses; the preset's settings in the agent's new HOME choose the API key instead.
func TestGeminiPresetThroughTheAction(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "gemini")
	const content = "# Research: greeting\n\nWritten by Gemini CLI for ralph.\n"
	model := agenttest.NewGemini(t, "fake-key", "", content)
	cfg := "agent:\n  preset: gemini\n  model: gemini-2.5-pro\n  max_turns: 10\n  timeout: 3m\n" +
		"  env:\n    GEMINI_API_KEY: \"\"\n    GOOGLE_GEMINI_BASE_URL: \"\"\n"
	presetResearch(t, cfg, map[string]string{
		"PATH": bin + ":" + os.Getenv("PATH"), "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": model.URL,
	}, nil, model.Turns, model.Problems, content)
}
