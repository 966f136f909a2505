package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
)

// With the gateway, the agent's environment has the gateway's URL and key where its vendor's clients look
// for theirs, and no variable that may hold a model key of the vendor or point elsewhere.
func TestGatewayEnv(t *testing.T) {
	t.Parallel()
	base := []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-real", "CLAUDE_CODE_OAUTH_TOKEN=oat-real", "ANTHROPIC_BASE_URL=https://elsewhere",
		"OPENAI_API_KEY=sk-openai", "RALPH_GATEWAY_KEY=forged", "LANG=C"}
	tests := []struct {
		name string
		gw   Gateway
		want []string
	}{
		{"an API key", Gateway{Vendor: gateway.Anthropic, URL: "http://127.0.0.1:9", Key: "k", KeyName: "ANTHROPIC_API_KEY"}, []string{
			"PATH=/bin", "OPENAI_API_KEY=sk-openai", "LANG=C",
			"RALPH_GATEWAY_URL=http://127.0.0.1:9", "RALPH_GATEWAY_KEY=k", "RALPH_GATEWAY_VENDOR=anthropic",
			"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=k"}},
		{"an OAuth token", Gateway{Vendor: gateway.Anthropic, URL: "http://127.0.0.1:9", Key: "k", KeyName: "CLAUDE_CODE_OAUTH_TOKEN"}, []string{
			"PATH=/bin", "OPENAI_API_KEY=sk-openai", "LANG=C",
			"RALPH_GATEWAY_URL=http://127.0.0.1:9", "RALPH_GATEWAY_KEY=k", "RALPH_GATEWAY_VENDOR=anthropic",
			"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "CLAUDE_CODE_OAUTH_TOKEN=k"}},
		{"OpenAI", Gateway{Vendor: gateway.OpenAI, URL: "http://127.0.0.1:9", Key: "k", KeyName: "CODEX_API_KEY"}, []string{
			"PATH=/bin", "ANTHROPIC_API_KEY=sk-real", "CLAUDE_CODE_OAUTH_TOKEN=oat-real", "ANTHROPIC_BASE_URL=https://elsewhere", "LANG=C",
			"RALPH_GATEWAY_URL=http://127.0.0.1:9", "RALPH_GATEWAY_KEY=k", "RALPH_GATEWAY_VENDOR=openai",
			"OPENAI_BASE_URL=http://127.0.0.1:9/v1", "OPENAI_API_KEY=k", "CODEX_API_KEY=k"}},
		// A CLI that talks to two vendors (opencode) holds neither's key: each is the gateway's, each base
		// URL the gateway's for that vendor.
		{"two vendors", Gateway{Vendor: gateway.Anthropic, URL: "http://127.0.0.1:9", Key: "k", KeyName: "ANTHROPIC_API_KEY", More: []gateway.Vendor{gateway.OpenAI}}, []string{
			"PATH=/bin", "LANG=C",
			"RALPH_GATEWAY_URL=http://127.0.0.1:9", "RALPH_GATEWAY_KEY=k", "RALPH_GATEWAY_VENDOR=anthropic",
			"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:9/openai/v1", "OPENAI_API_KEY=k"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.gw.env(base)); diff != "" {
			t.Errorf("%s: env (-want +got):\n%s", tt.name, diff)
		}
	}
}

// A command agent gets the documented variables with which to use the gateway; a verify command, run
// without it, gets none.
func TestCommandGatewayVariables(t *testing.T) {
	t.Parallel()
	inv, _ := newInvocation(t)
	inv.Env = append(baseEnv(), "OPENAI_API_KEY=sk-real")
	inv.Gateway = &Gateway{Vendor: gateway.OpenAI, URL: "http://127.0.0.1:9", Key: "ralph-gw-1", KeyName: "OPENAI_API_KEY"}
	script := `echo "url=$RALPH_GATEWAY_URL"; echo "key=$RALPH_GATEWAY_KEY"; echo "vendor=$RALPH_GATEWAY_VENDOR"; echo "openai=$OPENAI_BASE_URL"; echo "okey=$OPENAI_API_KEY"`
	if _, err := (&Command{Shell: script}).Run(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	got := parseLines(inv.Output.(*strings.Builder).String())
	want := map[string]string{"url": "http://127.0.0.1:9", "key": "ralph-gw-1", "vendor": "openai", "openai": "http://127.0.0.1:9/v1", "okey": "ralph-gw-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the command's variables (-want +got):\n%s", diff)
	}
}

// The presets: Claude Code's own cost limit gives way to the gateway's, Codex gets ralph's provider, and
// Gemini CLI's HOME gets the settings that pick the API key.
func TestPresetWithGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"claude", "codex", "gemini"} {
		// Each program prints its arguments, one a line, and HOME's Gemini settings.
		script := "#!/bin/sh\nfor a in \"$@\"; do echo \"arg: $a\"; done\necho \"settings: $(cat \"$HOME/.gemini/settings.json\" 2>/dev/null)\"\n"
		if err := os.WriteFile(filepath.Join(bin, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gw := &Gateway{Vendor: gateway.Anthropic, URL: "http://127.0.0.1:9", Key: "k", KeyName: "ANTHROPIC_API_KEY"}
	tests := []struct {
		cfg     config.Agent
		vendor  gateway.Vendor
		tools   []gateway.ServerTool
		want    []string
		wantNot []string
	}{
		{config.Agent{Preset: "claude", MaxCost: 2}, gateway.Anthropic, nil, []string{"arg: --no-session-persistence"}, []string{"--max-budget-usd"}},
		{config.Agent{Preset: "codex"}, gateway.OpenAI, nil, []string{`arg: model_providers.ralph={name="ralph", base_url="http://127.0.0.1:9/v1", env_key="RALPH_GATEWAY_KEY", wire_api="responses"}`, "arg: model_provider=ralph", `arg: web_search="disabled"`}, []string{"selectedType"}},
		// Codex offers its model web search on every request, which the gateway refuses unless allowed.
		{config.Agent{Preset: "codex"}, gateway.OpenAI, []gateway.ServerTool{gateway.WebSearch}, []string{"arg: model_provider=ralph"}, []string{"web_search"}},
		{config.Agent{Preset: "gemini"}, gateway.Gemini, nil, []string{`"selectedType":"gemini-api-key"`}, nil},
	}
	for _, tt := range tests {
		runner, err := New(tt.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		inv, _ := newInvocation(t)
		inv.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		g := *gw
		g.Vendor, g.ServerTools = tt.vendor, tt.tools
		inv.Gateway = &g
		_, _ = runner.Run(context.Background(), inv)
		out := inv.Output.(*strings.Builder).String()
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the CLI got no %q:\n%s", tt.cfg.Preset, w, out)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(out, w) {
				t.Errorf("%s: the CLI got %q:\n%s", tt.cfg.Preset, w, out)
			}
		}
	}
}

// newInvocation is a run in a fresh worktree whose output is kept.
func newInvocation(t *testing.T) (Invocation, *strings.Builder) {
	t.Helper()
	out := &strings.Builder{}
	return Invocation{Command: "research", Issue: 1, Dir: t.TempDir(), Prompt: "p", Env: baseEnv(), Timeout: time.Minute, Output: out}, out
}

func TestModelCredential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env   []string
		extra map[string]string
		want  gateway.Credential
		ok    bool
	}{
		{[]string{"ANTHROPIC_API_KEY=sk"}, nil, gateway.Credential{Name: "ANTHROPIC_API_KEY", Value: "sk"}, true},
		{[]string{"ANTHROPIC_API_KEY=sk"}, map[string]string{"ANTHROPIC_API_KEY": ""}, gateway.Credential{Name: "ANTHROPIC_API_KEY", Value: "sk"}, true},
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=oat"}, nil, gateway.Credential{Name: "CLAUDE_CODE_OAUTH_TOKEN", Value: "oat"}, true},
		{[]string{"ANTHROPIC_API_KEY="}, nil, gateway.Credential{}, false},
		{nil, map[string]string{"ANTHROPIC_API_KEY": "literal"}, gateway.Credential{Name: "ANTHROPIC_API_KEY", Value: "literal"}, true},
		{[]string{"OPENAI_API_KEY=sk"}, nil, gateway.Credential{}, false},
	}
	for _, tt := range tests {
		got, ok := ModelCredential(gateway.Anthropic, tt.env, tt.extra)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ModelCredential(%v, %v) = %+v, %v; want %+v, %v", tt.env, tt.extra, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPreflightGateway(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if err := PreflightGateway(c, []string{"PATH=/bin"}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN") {
		t.Errorf("without the key: %v", err)
	}
	if err := PreflightGateway(c, []string{"ANTHROPIC_API_KEY=sk"}); err != nil {
		t.Errorf("with the key: %v", err)
	}
	// opencode on an OpenAI model needs the OpenAI key, whatever else ralph holds.
	oc := config.Default()
	oc.Agent.Preset, oc.Agent.Model = "opencode", "openai/gpt-5.2"
	if err := PreflightGateway(oc, []string{"ANTHROPIC_API_KEY=sk"}); err == nil || !strings.Contains(err.Error(), "the openai key") || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("opencode on openai without its key: %v", err)
	}
	if err := PreflightGateway(oc, []string{"OPENAI_API_KEY=sk"}); err != nil {
		t.Errorf("opencode on openai with its key: %v", err)
	}
	c.Gateway.Enabled = false
	if err := PreflightGateway(c, nil); err != nil {
		t.Errorf("without the gateway: %v", err)
	}
}
