package agent

// The presets run the real CLIs from npm (installed by .ci/run into .cache/agents) against the scripted
// local models of internal/agent/agenttest, on loopback only.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
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
		dir, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "agents", "bin"))
	}
	if _, err := os.Stat(filepath.Join(dir, program)); err != nil {
		t.Skipf("%s is not installed in %s: run .ci/run (its \"== agent CLIs\" step installs it: script/image.sh cli) or set RALPH_AGENTS_BIN", program, dir)
	}
	return dir
}

// presetCase is one CLI's run: its config, the environment that points it at its fake, and the fake.
type presetCase struct {
	cfg   config.Agent
	env   []string // besides PATH and HOME
	turns func() int
	probs func() []string
	// With ralph's model gateway: the fake's URL, the vendor it speaks, the model key (which only the
	// gateway holds) and its variable, and what the fake billed.
	url     string
	vendor  gateway.Vendor
	keyName string
	key     string
	billed  func() agenttest.Billed
}

// presetSetup makes a CLI's case: via says whether it reaches its fake through ralph's gateway.
type presetSetup func(t *testing.T, dir, artifact, home, content string, via bool) presetCase

// runPreset runs a preset on the built-in research prompt in a fresh worktree and checks what every
// preset must do: the document is written where RALPH_ARTIFACT says, with the CLI's own file tool; the
// usage ralph records is what the fake model reported; the log shows readable progress, not JSON.
func runPreset(t *testing.T, program string, setup presetSetup) {
	t.Run("direct", func(t *testing.T) { runPresetIn(t, program, false, false, false, setup) })
	// Inside the agent's boundary, as the engine runs it: Landlock, the supervisor and, as root, a user of
	// the agent's own with its own HOME and TMPDIR.
	t.Run("confined", func(t *testing.T) { runPresetIn(t, program, true, false, false, setup) })
	// And through ralph's model gateway, as the engine runs it by default: the CLI gets the gateway's URL
	// and a key good for this run; only the gateway holds the model key.
	t.Run("gateway", func(t *testing.T) { runPresetIn(t, program, true, true, false, setup) })
	// And with the network's allow-list, as the engine runs it by default: the CLI's proxy is ralph's, and
	// the kernel lets it connect only to the proxy and the gateway; its model traffic still reaches the
	// gateway (the gateway metered what the model billed).
	t.Run("allowlist", func(t *testing.T) { runPresetIn(t, program, true, true, true, setup) })
}

func runPresetIn(t *testing.T, program string, confined, via, allowlist bool, setup presetSetup) {
	bin := agentsBin(t, program)
	separate := confined && os.Geteuid() == 0
	uid := -1
	if separate {
		uid = reservedUID(t)
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
	pc := setup(t, dir, artifact, home, content, via)

	prompt, err := prompts.New("").Render("research", prompts.Data{
		Repository: "octo/demo", Issue: prompts.Issue{Number: 42, Title: "Fake", Body: "Please research.", URL: "https://github.com/octo/demo/issues/42"},
		Artifact: artifact, Branch: "ralph/42-fake", Base: "main", Protected: []string{".github/workflows/**"},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := New(pc.cfg, nil)
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
	var gw *gateway.Gateway
	var access *Gateway
	if via {
		gw, err = gateway.Start(gateway.Options{Vendor: pc.vendor, Upstream: pc.url, Credential: gateway.Credential{Name: pc.keyName, Value: pc.key}})
		if err != nil {
			t.Fatal(err)
		}
		defer gw.Close()
		access = &Gateway{Vendor: pc.vendor, URL: gw.URL(), Key: gw.Key(), KeyName: pc.keyName}
	}
	var network *sandbox.Network
	var proxy *netproxy.Proxy
	if allowlist {
		// As the engine opens it (session/network.go): the defaults, and the gateway, should a CLI send its
		// model requests through the proxy.
		gwHost := strings.TrimPrefix(gw.URL(), "http://")
		proxy, err = netproxy.Start(netproxy.Options{Allow: append(config.Default().Network.Hosts(), gwHost),
			Hosts: map[string][]netip.Addr{"127.0.0.1": {netip.MustParseAddr("127.0.0.1")}}})
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		_, gwPort, _ := strings.Cut(gwHost, ":")
		port, _ := strconv.Atoi(gwPort)
		network = &sandbox.Network{Ports: []int{proxy.Port(), port}, RequireKernel: true}
		env = WithProxy(env, proxy.URL())
	}
	var boundary *sandbox.Boundary
	if confined {
		if separate {
			chownAll(t, dir, uid)
			chownAll(t, home, uid)
		}
		if boundary, err = sandbox.New(sandbox.Config{Separate: separate, UID: uid, GID: uid, Writable: []string{dir, home, tmp}, Launcher: buildRalph(t), Network: network}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	res, err := runner.Run(context.Background(), Invocation{
		Command: "research", Issue: 42, Artifact: artifact, Dir: dir, Prompt: prompt, TempDir: tmp,
		Env: env, Timeout: 3 * time.Minute, Output: &out, Boundary: boundary, Gateway: access,
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
	if via {
		// What the gateway metered is what the model billed, every answer included.
		b, m := pc.billed(), gw.Usage()
		if m.Requests != b.Requests || m.Input != b.InputTokens || m.CacheRead != b.CachedTokens || m.Output != b.OutputTokens {
			t.Errorf("the gateway metered %+v; the model billed %+v", m, b)
		}
		if refused := gw.Refused(); len(refused) > 0 {
			t.Logf("the gateway refused: %q", refused)
		}
		// The model key is nowhere the agent wrote.
		for _, d := range []string{dir, home, tmp} {
			if where := findSecret(t, d, pc.key); where != "" {
				t.Errorf("the model key is in %s", where)
			}
		}
	}
	if proxy != nil {
		// What the CLI asked for besides its model (telemetry, update checks) is refused, not a failure.
		refused, more := proxy.Refused()
		t.Logf("%s: ralph's network proxy refused %q and %d more", program, refused, more)
	}
	t.Logf("%s usage: %s\n%s", program, u, log)
}

// findSecret names a file under dir that holds secret, or "".
func findSecret(t *testing.T, dir, secret string) string {
	t.Helper()
	found := ""
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
			found = p
		}
		return nil
	})
	return found
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
	runPreset(t, "claude", func(t *testing.T, dir, artifact, home, content string, via bool) presetCase {
		f := agenttest.NewAnthropic(t, "sk-ant-fake", artifact, content)
		env := []string{"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
		if !via {
			env = append(env, "ANTHROPIC_BASE_URL="+f.URL, "ANTHROPIC_API_KEY=sk-ant-fake")
		}
		return presetCase{
			cfg:   config.Agent{Preset: "claude", Model: "claude-sonnet-4-5", MaxTurns: 10, MaxCost: 5},
			env:   env,
			turns: f.Turns,
			probs: f.Problems,
			url:   f.URL, vendor: gateway.Anthropic, keyName: "ANTHROPIC_API_KEY", key: "sk-ant-fake", billed: f.Billed,
		}
	})
}

func TestPresetCodexRealCLI(t *testing.T) {
	t.Parallel()
	runPreset(t, "codex", func(t *testing.T, dir, artifact, home, content string, via bool) presetCase {
		f := agenttest.NewOpenAI(t, "sk-fake", artifact, content)
		pc := presetCase{
			cfg:   config.Agent{Preset: "codex", Model: "gpt-5.1-codex", MaxTurns: 10},
			turns: f.Turns,
			probs: f.Problems,
			url:   f.URL, vendor: gateway.OpenAI, keyName: "OPENAI_API_KEY", key: "sk-fake", billed: f.Billed,
		}
		if !via {
			// Codex reaches a custom endpoint through a model provider in its config; agent.args carries it.
			provider := `model_providers.fake={name="fake", base_url="` + f.URL + `/v1", env_key="OPENAI_API_KEY", wire_api="responses"}`
			pc.cfg.Args = []string{"-c", provider, "-c", "model_provider=fake"}
			pc.env = []string{"OPENAI_API_KEY=sk-fake"} // CODEX_HOME: under HOME, by default
		}
		return pc
	})
}

func TestPresetGeminiRealCLI(t *testing.T) {
	t.Parallel()
	runPreset(t, "gemini", func(t *testing.T, dir, artifact, home, content string, via bool) presetCase {
		f := agenttest.NewGemini(t, "fake-key", artifact, content)
		pc := presetCase{
			// A model named in the config also spares the CLI's model-routing side requests.
			cfg:   config.Agent{Preset: "gemini", Model: "gemini-2.5-pro", MaxTurns: 10},
			turns: f.Turns,
			probs: f.Problems,
			url:   f.URL, vendor: gateway.Gemini, keyName: "GEMINI_API_KEY", key: "fake-key", billed: f.Billed,
		}
		if via {
			return pc // the preset writes the settings the gateway needs itself
		}
		// With GOOGLE_GEMINI_BASE_URL set, Gemini CLI takes the auth type to be "gateway", which headless
		// mode refuses; the preset's settings, written in the empty HOME, pick the API key instead.
		pc.env = []string{"GOOGLE_GEMINI_BASE_URL=" + f.URL, "GEMINI_API_KEY=fake-key"}
		return pc
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
	runner, err := New(config.Agent{Preset: "claude", MaxTurns: 1}, nil)
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

// When a budget is reached, the gateway refuses the CLI's next model request with ralph's reason, which each
// CLI shows and stops at; what it wrote before is there. (The engine turns this into "budget reached".)
func TestPresetBudgetRealCLI(t *testing.T) {
	t.Parallel()
	for _, program := range []string{"claude", "codex", "gemini"} {
		t.Run(program, func(t *testing.T) {
			t.Parallel()
			bin := agentsBin(t, program)
			dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
			artifact := filepath.Join(dir, "doc.md")
			content := "# Research\n\nWritten before the budget ran out.\n"
			var (
				url     string
				vendor  gateway.Vendor
				keyName string
				cfg     config.Agent
				billed  func() agenttest.Billed
			)
			switch program {
			case "claude":
				f := agenttest.NewAnthropic(t, "real-key", artifact, content)
				url, vendor, keyName, billed = f.URL, gateway.Anthropic, "ANTHROPIC_API_KEY", f.Billed
				cfg = config.Agent{Preset: "claude", Model: "claude-sonnet-4-5", MaxCost: 0.0001}
			case "codex":
				f := agenttest.NewOpenAI(t, "real-key", artifact, content)
				url, vendor, keyName, billed = f.URL, gateway.OpenAI, "OPENAI_API_KEY", f.Billed
				cfg = config.Agent{Preset: "codex", Model: "gpt-5.1-codex"}
			case "gemini":
				f := agenttest.NewGemini(t, "real-key", artifact, content)
				url, vendor, keyName, billed = f.URL, gateway.Gemini, "GEMINI_API_KEY", f.Billed
				cfg = config.Agent{Preset: "gemini", Model: "gemini-2.5-pro"}
			}
			gw, err := gateway.Start(gateway.Options{Vendor: vendor, Upstream: url, Credential: gateway.Credential{Name: keyName, Value: "real-key"},
				Limits: []gateway.Limit{{Name: "step", Tokens: 1, Why: "agent.max_tokens 1 per step"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			runner, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp,
				"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
			var out bytes.Buffer
			start := time.Now()
			res, err := runner.Run(context.Background(), Invocation{Command: "research", Artifact: artifact, Dir: dir,
				Prompt: "Write the document at\n\n    " + artifact + "\n\n", TempDir: tmp, Env: env, Timeout: 2 * time.Minute, Output: &out,
				Gateway: &Gateway{Vendor: vendor, URL: gw.URL(), Key: gw.Key(), KeyName: keyName}})
			log := out.String()
			stop := gw.Stopped()
			if stop == nil || stop.Limit.Name != "step" {
				t.Fatalf("the gateway did not stop the run (%v, %+v)\n%s", err, res, log)
			}
			if !strings.Contains(log, "budget reached") {
				t.Errorf("the CLI does not show ralph's reason:\n%s", log)
			}
			if got, _ := os.ReadFile(artifact); string(got) != content {
				t.Errorf("the document written before the budget = %q", got)
			}
			if b := billed(); b.Requests != 1 {
				t.Errorf("the model answered %d requests, want 1 (then the budget)", b.Requests)
			}
			t.Logf("%s after the budget: exit %d, %v, in %s; refused %d times\n%s", program, res.ExitCode, err, time.Since(start).Round(time.Millisecond), len(gw.Refused()), log)
		})
	}
}

// Claude Code with an OAuth token (CLAUDE_CODE_OAUTH_TOKEN, a Claude subscription's): ralph holds the
// token, Claude Code gets the gateway's key in its place and sends it as its bearer token, and the model
// gets ralph's.
func TestPresetClaudeOAuthRealCLI(t *testing.T) {
	t.Parallel()
	bin := agentsBin(t, "claude")
	dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	artifact := filepath.Join(dir, "doc.md")
	const token = "sk-ant-oat01-ralphs-own"
	f := agenttest.NewAnthropic(t, token, artifact, "# Research\n")
	gw, err := gateway.Start(gateway.Options{Vendor: gateway.Anthropic, Upstream: f.URL, Credential: gateway.Credential{Name: "CLAUDE_CODE_OAUTH_TOKEN", Value: token}})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	runner, err := New(config.Agent{Preset: "claude", Model: "claude-sonnet-4-5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp,
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	var out bytes.Buffer
	res, err := runner.Run(context.Background(), Invocation{Command: "research", Artifact: artifact, Dir: dir,
		Prompt: "Write the document at\n\n    " + artifact + "\n\n", TempDir: tmp, Env: env, Timeout: 2 * time.Minute, Output: &out,
		Gateway: &Gateway{Vendor: gateway.Anthropic, URL: gw.URL(), Key: gw.Key(), KeyName: "CLAUDE_CODE_OAUTH_TOKEN"}})
	if err != nil {
		t.Fatalf("Run: %v (%+v)\n%s", err, res, out.String())
	}
	for _, p := range f.Problems() {
		t.Errorf("fake model: %s", p)
	}
	if f.Turns() != 2 || gw.Usage().Requests != f.Billed().Requests {
		t.Errorf("turns %d, metered %+v, billed %+v\n%s", f.Turns(), gw.Usage(), f.Billed(), out.String())
	}
	if where := findSecret(t, home, token); where != "" {
		t.Errorf("the token is in %s", where)
	}
	t.Logf("refused: %q\n%s", gw.Refused(), out.String())
}
