package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

func TestNoKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  config.Agent
		want string
	}{
		{config.Agent{Preset: "claude", Env: map[string]string{}}, `add ANTHROPIC_API_KEY: "" under agent.env`},
		{config.Agent{Preset: "claude", Env: map[string]string{"ANTHROPIC_API_KEY": ""}}, ""},
		{config.Agent{Preset: "codex", Env: map[string]string{"CODEX_API_KEY": "x"}}, ""},
		{config.Agent{Preset: "gemini"}, "GEMINI_API_KEY or GOOGLE_API_KEY"},
		{config.Agent{Preset: "command", Command: "x"}, ""},
	}
	for _, tt := range tests {
		got := NoKey(tt.cfg)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("NoKey(%+v) = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

// Version runs the CLI found on the agent's PATH, with the agent's environment and a HOME of its own.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = --version ] || exit 3\n[ -z \"$SECRET\" ] || exit 4\necho \"2.1.330 (Claude Code)\"\necho more\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin, "SECRET=s"}
	got, err := Version(context.Background(), config.Agent{Preset: "claude"}, env)
	if err != nil || got != "claude 2.1.330 (Claude Code)" {
		t.Errorf("Version = %q, %v", got, err)
	}
	if got, err := Version(context.Background(), config.Agent{Preset: "command", Command: "x"}, env); got != "" || err != nil {
		t.Errorf("command preset: %q, %v", got, err)
	}
	_, err = Version(context.Background(), config.Agent{Preset: "codex"}, env)
	if err == nil || !strings.Contains(err.Error(), "npm install -g @openai/codex") {
		t.Errorf("codex missing: %v", err)
	}
}

// Preflight's problems come one by one, with the variables that are missing.
func TestPreflightProblems(t *testing.T) {
	t.Parallel()
	_, err := Preflight(config.Agent{Preset: "claude", Command: "no-such-cli-here", Env: map[string]string{"MY_KEY": ""}}, []string{"PATH=/nonexistent"}, sandbox.Config{})
	var pe *PreflightError
	if !errors.As(err, &pe) || len(pe.Problems) != 2 || len(pe.Missing) != 1 || pe.Missing[0] != "MY_KEY" {
		t.Fatalf("Preflight = %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "the agent cannot run here, so ralph left the issue alone: no-such-cli-here not found") {
		t.Errorf("message: %v", err)
	}
}

// In the Action (GITHUB_ACTIONS=true in the environment ralph is given, not the test's own), a preset
// whose CLI is not in the image names the action whose image holds it: when its version is read, at
// preflight, and when a step runs it.
func TestMissingCLIInTheActionNamesItsImage(t *testing.T) {
	t.Parallel()
	path := "PATH=" + t.TempDir()
	env := []string{path, "GITHUB_ACTIONS=true"}
	getenv := func(key string) string { return Getenv(env, key) }
	for _, name := range preset.Names() {
		want := "uses: ralph-dev/gh-ralph/" + name + "@"
		_, err := Version(context.Background(), config.Agent{Preset: name}, env)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "npm install") {
			t.Errorf("%s missing in the Action, its version: %v", name, err)
		}
		_, err = Preflight(config.Agent{Preset: name}, env, sandbox.Config{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "npm install") {
			t.Errorf("%s missing in the Action, preflight: %v", name, err)
		}
		runner, err := New(config.Agent{Preset: name}, getenv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = runner.Run(context.Background(), Invocation{Dir: t.TempDir(), Prompt: "hi", Env: []string{path}})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "npm install") {
			t.Errorf("%s missing in the Action, its run: %v", name, err)
		}
		// Off a runner, npm installs it.
		runner, err = New(config.Agent{Preset: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = runner.Run(context.Background(), Invocation{Dir: t.TempDir(), Prompt: "hi", Env: []string{path}})
		if err == nil || !strings.Contains(err.Error(), "npm install") {
			t.Errorf("%s missing off a runner, its run: %v", name, err)
		}
	}
}
