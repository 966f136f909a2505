package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

func TestCommandProgram(t *testing.T) {
	t.Parallel()
	tests := []struct{ shell, want string }{
		{"my-agent --yolo", "my-agent"},
		{"FOO=1 BAR=2 my-agent", "my-agent"},
		{"exec my-agent", "my-agent"},
		{"env FOO=1 my-agent", "my-agent"},
		{"/opt/agent/run -x", "/opt/agent/run"},
		{"./scripts/agent.sh", ""}, // resolved in the agent's copy, which does not exist yet
		{"cd sub && my-agent", ""},
		{"\"$HOME/bin/agent\"", ""},
		{"$AGENT", ""},
		{"true", ""},
		{"", ""},
		{"FOO=1", ""},
	}
	for _, tt := range tests {
		if got := CommandProgram(tt.shell); got != tt.want {
			t.Errorf("CommandProgram(%q) = %q, want %q", tt.shell, got, tt.want)
		}
	}
}

// The command preset's program is checked before a step, as a preset's CLI is.
func TestPreflightCommand(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	agent := filepath.Join(bin, "my-agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(bin, "not-executable")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	tests := []struct {
		command string
		want    string // "" no problem
	}{
		{"my-agent --yolo", ""},
		{agent, ""},
		{"sh -c 'exit 0'", ""},
		{"cd . && no-such-agent", ""}, // ralph cannot tell: the step will
		{"no-such-agent --yolo", "agent.command runs no-such-agent, which is not on the agent's PATH"},
		{"/nonexistent/agent", "agent.command runs /nonexistent/agent, which does not exist here"},
		{plain, "which is not an executable file"},
	}
	for _, tt := range tests {
		_, err := Preflight(config.Agent{Preset: "command", Command: tt.command}, env, sandbox.Config{})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Preflight(command: %q) = %v, want no problem", tt.command, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Preflight(command: %q) = %v, want a problem containing %q", tt.command, err, tt.want)
		}
	}
}

func TestMachinePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ shell, want string }{
		{"/home/mona/bin/agent --x", "/home/mona/bin/agent"},
		{"/srv/me/agent", "/srv/me/agent"}, // under the home given below
		{"/usr/local/bin/agent", ""},
		{"my-agent", ""},
		{"./scripts/agent", ""},
	}
	for _, tt := range tests {
		if got := MachinePath(tt.shell, "/srv/me"); got != tt.want {
			t.Errorf("MachinePath(%q) = %q, want %q", tt.shell, got, tt.want)
		}
	}
}
