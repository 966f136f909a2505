package agent

// The presets run the real CLIs from npm (installed by .ci/run into .cache/agents) against the scripted
// local models of internal/agent/agenttest, on loopback only.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// The usage every scripted model reports per turn.
const (
	fakeInputTokens  = agenttest.InputTokens
	fakeOutputTokens = agenttest.OutputTokens
)

// agentsBin is where .ci/run installs the CLIs; RALPH_AGENTS_BIN names another directory.
func agentsBin(t *testing.T, program string) string {
	t.Helper()
	dir := os.Getenv("RALPH_AGENTS_BIN")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "agents", "node_modules", ".bin"))
	}
	if _, err := os.Stat(filepath.Join(dir, program)); err != nil {
		t.Skipf("%s is not installed in %s: run .ci/run (its \"== agent CLIs\" step installs it with npm) or set RALPH_AGENTS_BIN", program, dir)
	}
	return dir
}

// presetCase is one CLI's run: its config, the environment that points it at its fake, and the fake.
type presetCase struct {
	cfg   config.Agent
	env   []string // besides PATH and HOME
	turns func() int
	probs func() []string
}

// runPreset runs a preset on the built-in research prompt in a fresh worktree and checks what every
// preset must do: the document is written where RALPH_ARTIFACT says, with the CLI's own file tool; the
// usage ralph records is what the fake model reported; the log shows readable progress, not JSON.
func runPreset(t *testing.T, program string, setup func(t *testing.T, dir, artifact, home, content string) presetCase) {
	t.Run("direct", func(t *testing.T) { runPresetIn(t, program, false, setup) })
	// Inside the agent's boundary, as the engine runs it: Landlock, the supervisor and, as root, a user of
	// the agent's own with its own HOME and TMPDIR.
	t.Run("confined", func(t *testing.T) { runPresetIn(t, program, true, setup) })
}

func runPresetIn(t *testing.T, program string, confined bool, setup func(t *testing.T, dir, artifact, home, content string) presetCase) {
	bin := agentsBin(t, program)
	separate := confined && os.Geteuid() == 0
	uid := -1
	if separate {
		uid, _ = sandbox.PickIDs()
	}
	dir, home, tmp := t.TempDir(), t.TempDir(), os.TempDir()
	if confined {
		dir, home, tmp = openDir(t, uid), openDir(t, uid), openDir(t, uid)
	}
	rel := "thoughts/shared/research/2026-11-22-GH-0042-fake.md"
	artifact := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(artifact), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	content := "# Research: fake\n\nWritten by " + program + " for ralph.\n"
	pc := setup(t, dir, artifact, home, content)

	prompt, err := prompts.New("").Render("research", prompts.Data{
		Repository: "octo/demo", Issue: prompts.Issue{Number: 42, Title: "Fake", Body: "Please research.", URL: "https://github.com/octo/demo/issues/42"},
		Artifact: artifact, Branch: "ralph/42-fake", Base: "main", Protected: []string{".github/workflows/**"},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := New(pc.cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The key reaches the CLI through Environ, as in the engine: named in agent.env (passed through), while
	// GitHub's token does not; HOME and TMPDIR are the agent's own, as the engine sets them.
	base := append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "GITHUB_TOKEN=ghs_secret"}, pc.env...)
	passed := map[string]string{}
	for _, kv := range pc.env {
		k, _, _ := strings.Cut(kv, "=")
		passed[k] = ""
	}
	env := append(Environ(base, []string{"ghs_secret"}, passed), "HOME="+home, "TMPDIR="+tmp)
	var boundary *sandbox.Boundary
	if confined {
		if separate {
			chownAll(t, dir, uid)
			chownAll(t, home, uid)
		}
		if boundary, err = sandbox.New(sandbox.Config{Separate: separate, UID: uid, GID: uid, Writable: []string{dir, home, tmp}, Launcher: buildRalph(t)}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	res, err := runner.Run(context.Background(), Invocation{
		Command: "research", Issue: 42, Artifact: artifact, Dir: dir, Prompt: prompt, TempDir: tmp,
		Env: env, Timeout: 3 * time.Minute, Output: &out, Boundary: boundary,
	})
	log := out.String()
	if err != nil {
		t.Fatalf("Run: %v (%+v)\n%s", err, res, log)
	}
	for _, p := range pc.probs() {
		t.Errorf("fake model: %s", p)
	}
	got, err := os.ReadFile(artifact)
	if err != nil || string(got) != content {
		t.Errorf("artifact = %q, %v; want %q\nlog:\n%s", got, err, content, log)
	}
	turns := pc.turns()
	if turns != 2 {
		t.Errorf("the fake model answered %d agent turns, want 2 (tool call, then the end)", turns)
	}
	if res.Usage == nil {
		t.Fatalf("no usage recorded\n%s", log)
	}
	u := *res.Usage
	if u.Turns != turns || u.InputTokens != turns*fakeInputTokens || u.OutputTokens != turns*fakeOutputTokens {
		t.Errorf("usage = %+v, want %d turns, %d in, %d out tokens\n%s", u, turns, turns*fakeInputTokens, turns*fakeOutputTokens, log)
	}
	if u.Model == "" || u.HitTurnLimit || u.OverBudget {
		t.Errorf("usage = %+v, want a model and no limit hit", u)
	}
	if !strings.Contains(log, "✎") || !strings.Contains(log, "GH-0042-fake.md") {
		t.Errorf("log does not show the file edit:\n%s", log)
	}
	if strings.Contains(log, `{"type"`) {
		t.Errorf("log shows raw JSON events:\n%s", log)
	}
	t.Logf("%s usage: %s\n%s", program, u, log)
}

// chownAll gives every file under dir to uid, as the workspace gives the agent its copy.
func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPresetClaudeRealCLI(t *testing.T) {
	t.Parallel()
	runPreset(t, "claude", func(t *testing.T, dir, artifact, home, content string) presetCase {
		f := agenttest.NewAnthropic(t, "sk-ant-fake", artifact, content)
		return presetCase{
			cfg: config.Agent{Preset: "claude", Model: "claude-sonnet-4-5", MaxTurns: 10, MaxCost: 5},
			env: []string{"ANTHROPIC_BASE_URL=" + f.URL, "ANTHROPIC_API_KEY=sk-ant-fake",
				"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
			turns: f.Turns,
			probs: f.Problems,
		}
	})
}

func TestPresetCodexRealCLI(t *testing.T) {
	t.Parallel()
	runPreset(t, "codex", func(t *testing.T, dir, artifact, home, content string) presetCase {
		f := agenttest.NewOpenAI(t, "sk-fake", artifact, content)
		// Codex reaches a custom endpoint through a model provider in its config; agent.args carries it.
		provider := `model_providers.fake={name="fake", base_url="` + f.URL + `/v1", env_key="OPENAI_API_KEY", wire_api="responses"}`
		return presetCase{
			cfg:   config.Agent{Preset: "codex", Model: "gpt-5.1-codex", MaxTurns: 10, Args: []string{"-c", provider, "-c", "model_provider=fake"}},
			env:   []string{"OPENAI_API_KEY=sk-fake"}, // CODEX_HOME: under HOME, by default
			turns: f.Turns,
			probs: f.Problems,
		}
	})
}

func TestPresetGeminiRealCLI(t *testing.T) {
	t.Parallel()
	runPreset(t, "gemini", func(t *testing.T, dir, artifact, home, content string) presetCase {
		f := agenttest.NewGemini(t, "fake-key", artifact, content)
		// With GOOGLE_GEMINI_BASE_URL set, Gemini CLI takes the auth type to be "gateway", which headless
		// mode refuses; the preset's settings, written in the empty HOME, pick the API key instead.
		return presetCase{
			// A model named in the config also spares the CLI's model-routing side requests.
			cfg:   config.Agent{Preset: "gemini", Model: "gemini-2.5-pro", MaxTurns: 10},
			env:   []string{"GOOGLE_GEMINI_BASE_URL=" + f.URL, "GEMINI_API_KEY=fake-key"},
			turns: f.Turns,
			probs: f.Problems,
		}
	})
}

// At agent.max_turns Claude Code stops itself (error_max_turns, exit status 1); ralph says the turn limit
// was hit and keeps what was written before it.
func TestPresetClaudeTurnLimitRealCLI(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "claude")
	dir, home := t.TempDir(), t.TempDir()
	artifact := filepath.Join(dir, "doc.md")
	f := agenttest.NewAnthropic(t, "sk-ant-fake", artifact, "# Research\n")
	runner, err := New(config.Agent{Preset: "claude", MaxTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_BASE_URL=" + f.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	var out bytes.Buffer
	res, err := runner.Run(context.Background(), Invocation{Command: "research", Artifact: artifact, Dir: dir,
		Prompt: "Write " + artifact, Env: env, Timeout: 2 * time.Minute, Output: &out})
	var le *LimitError
	if !errors.As(err, &le) || res.Usage == nil || !res.Usage.HitTurnLimit || res.Usage.Turns != 1 {
		t.Fatalf("Run = %+v, %v; want a turn-limit *LimitError after 1 turn\n%s", res.Usage, err, out.String())
	}
	turns := f.Turns()
	if _, err := os.Stat(artifact); err != nil || turns != 1 {
		t.Errorf("artifact: %v, fake turns %d; want the file written in the one turn", err, turns)
	}
}
