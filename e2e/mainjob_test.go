package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The README's "run ralph's main job" command, run by hand (no GITHUB_ACTIONS): plain text, no workflow
// command (::add-mask:: would print the token), errors as plain lines with their line breaks.
func TestMainJobOutsideActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	tests := []struct {
		name, token string
		exit        int
		want        string // a line of the output
	}{
		{"a dry run", "test-token", 0, "step=research"},
		{"no token", "", 4, "To get started with GitHub CLI, please run:  gh auth login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.byHand(tt.token, "INPUT_ISSUE="+itoa(n), "INPUT_DRY_RUN=true")
			out := r.stdout + r.stderr
			if r.exit != tt.exit {
				t.Errorf("exit %d, want %d\n%s", r.exit, tt.exit, out)
			}
			if !strings.Contains("\n"+out, "\n"+tt.want+"\n") {
				t.Errorf("no line %q in the output:\n%s", tt.want, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "::") || strings.Contains(line, "%0A") {
					t.Errorf("a workflow command outside GitHub Actions: %q", line)
				}
			}
			if strings.Contains(out, "test-token") {
				t.Errorf("the output holds the token:\n%s", out)
			}
		})
	}
}

// preset: command with a program that does not exist is refused before anything changes, as a missing
// claude is, through both doors.
func TestPreflightCommandMissing(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, command, want string }{
		{"on the PATH", "my-agent --yolo", "agent.command runs my-agent, which is not on the agent's PATH"},
		{"after variables", "FOO=1 exec my-agent", "agent.command runs my-agent, which is not on the agent's PATH"},
		{"by its path", "/opt/no-such-agent/run", "agent.command runs /opt/no-such-agent/run, which does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := fmt.Sprintf("agent:\n  preset: command\n  command: %q\n", tt.command)
			e := newEnv(t, cfg)
			n := e.srv.CreateIssue("octocat", "Add a greeting", "")
			r := e.label(n, maintainer)
			if r.exit != 1 || !strings.Contains(r.stdout, tt.want) || !strings.Contains(r.stdout, "ralph left the issue alone") {
				t.Errorf("the Action: exit %d, want 1 and %q\n%s", r.exit, tt.want, r.stdout)
			}
			e.untouched(n)

			c := newCLIEnv(t, cfg)
			m := c.srv.CreateIssue(maintainer, "Add a greeting", "")
			c.srv.AddLabel(m, workflow.LabelBuild, maintainer)
			r = c.cli(binary, "advance", fmt.Sprint(m))
			if r.exit != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("gh ralph advance: exit %d, want 1 and %q\n%s%s", r.exit, tt.want, r.stdout, r.stderr)
			}
			c.untouched(m)
			// doctor warns of it: only gh ralph advance on this machine needs the command here (the Action
			// checks its own runner, as above).
			r = c.cli(binary, "doctor")
			if !strings.Contains(r.stdout, "! "+tt.want) || strings.Contains(r.stdout, "X "+tt.want) {
				t.Errorf("gh ralph doctor: exit %d, want a warning %q\n%s%s", r.exit, tt.want, r.stdout, r.stderr)
			}
		})
	}
}
