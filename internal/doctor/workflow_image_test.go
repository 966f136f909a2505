package doctor

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
)

// Each agent's CLI is in its own image, named by its own action (ralph-dev/gh-ralph/<agent>): doctor
// finds the step under any of them, and says so when the step's image has not the CLI agent.preset runs.
func TestWorkflowImageOfTheAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uses, preset, command string
		wantAgent             string
		wantProblem           bool
	}{
		{"ralph-dev/gh-ralph/claude@v1", "claude", "", "claude", false},
		{"ralph-dev/gh-ralph/codex@abc # v1.0.0", "codex", "", "codex", false},
		{"ralph-dev/gh-ralph/gemini@v1", "gemini", "", "gemini", false},
		{"ralph-dev/gh-ralph@v1", "command", "make agent", "", false},
		{"ralph-dev/gh-ralph/claude@v1", "command", "make agent", "claude", false},    // a CLI it does not use
		{"ralph-dev/gh-ralph@v1", "claude", "", "", true},                             // the slim image: no CLI
		{"ralph-dev/gh-ralph/codex@v1", "claude", "", "codex", true},                  // another agent's
		{"ralph-dev/gh-ralph@v1", "codex", "npx -y @openai/codex@0.169.0", "", false}, // agent.command replaces the CLI
	}
	for _, tt := range tests {
		yml := "on: [issues]\njobs:\n  a:\n    steps:\n      - uses: " + tt.uses + "\n"
		wf, err := ParseWorkflow("w.yml", []byte(yml))
		if err != nil || wf == nil {
			t.Errorf("%s: ParseWorkflow = %v, %v: the step is not found", tt.uses, wf, err)
			continue
		}
		if got, want := wf.Agent, tt.wantAgent; got != want {
			t.Errorf("%s: the image's agent = %q, want %q", tt.uses, got, want)
		}
		cfg := config.Default()
		cfg.Agent.Preset, cfg.Agent.Command = tt.preset, tt.command
		var found []string
		for _, f := range Problems(WorkflowFile(wf, cfg)) {
			if strings.Contains(f.Msg, "image") {
				found = append(found, f.String())
			}
		}
		if got, want := len(found) > 0, tt.wantProblem; got != want {
			t.Errorf("%s with preset %s (command %q): problems %q, want one: %v", tt.uses, tt.preset, tt.command, found, want)
		}
		if tt.wantProblem && len(found) > 0 && !strings.Contains(found[0], "ralph-dev/gh-ralph/"+tt.preset+"@") {
			t.Errorf("%s with preset %s: the fix does not name the agent's action: %s", tt.uses, tt.preset, found[0])
		}
	}
	if got, want := agent.ActionOf("claude"), "ralph-dev/gh-ralph/claude"; got != want {
		t.Errorf("agent.ActionOf(claude) = %q, want %q", got, want)
	}
	if got, want := agent.ActionOf("command"), "ralph-dev/gh-ralph"; got != want {
		t.Errorf("agent.ActionOf(command) = %q, want %q", got, want)
	}
}
