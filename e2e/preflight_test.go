package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// untouched checks that issue n carries nothing of ralph's: no state label, no comment, no lock, no agent run.
func (e *env) untouched(n int) {
	e.t.Helper()
	if slices.ContainsFunc(e.srv.Labels(n), isStateLabel) {
		e.t.Errorf("#%d got a state label: %v", n, e.srv.Labels(n))
	}
	if cs := e.srv.Comments(n); len(cs) != 0 {
		e.t.Errorf("#%d got %d comments, the first: %s", n, len(cs), cs[0].Body)
	}
	if refs := e.lockRefs(); len(refs) != 0 {
		e.t.Errorf("locks left: %v", refs)
	}
	if inv := e.invocations(); len(inv) != 0 {
		e.t.Errorf("the agent ran: %v", inv)
	}
}

// Before an issue is locked or changed, ralph checks that the agent can run: a missing CLI, a missing API
// key, a boundary that cannot be set up fail the run, leave the issue as it was, and count no failure (a
// second run does not send the issue to Human Needed).
func TestPreflight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		env          map[string]string
		root         bool
		want         string
	}{
		{
			name:   "agent CLI missing",
			config: "agent:\n  preset: claude\n  command: no-such-agent-cli\n",
			want:   "no-such-agent-cli not found on the agent's PATH",
		},
		{
			name:   "API key missing",
			config: "agent:\n  preset: command\n  command: " + "true" + "\n  env:\n    MY_API_KEY: \"\"\n",
			want:   "agent.env passes MY_API_KEY through, but ralph's environment does not have it",
		},
		{
			name:   "model key missing for the gateway",
			config: "agent:\n  preset: command\n  command: true\ngateway:\n  vendor: anthropic\n",
			env:    map[string]string{"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": ""},
			want:   "ralph's model gateway needs the anthropic key in ralph's environment, as ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN",
		},
		{
			name:   "boundary cannot be set up",
			config: "agent:\n  preset: command\n  command: true\n",
			env:    map[string]string{"RALPH_AGENT_DENY": "/etc/hostname"},
			root:   true,
			want:   "the agent's user could still reach /etc/hostname",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.root {
				needRoot(t)
			}
			if _, err := os.Stat("/etc/hostname"); tt.root && err != nil {
				t.Skip("needs /etc/hostname")
			}
			e := newEnv(t, tt.config)
			e.extra = tt.env
			n := e.srv.CreateIssue("octocat", "Add a greeting", "")
			for i := 0; i < 2; i++ {
				r := e.label(n, maintainer)
				if r.exit != 1 || !strings.Contains(r.stdout, tt.want) || !strings.Contains(r.stdout, "ralph left the issue alone") {
					t.Fatalf("run %d: exit %d, want 1 and %q\n%s", i+1, r.exit, tt.want, r.stdout)
				}
			}
			e.untouched(n)
		})
	}
}

// gh ralph advance checks the same before it touches the issue.
func TestPreflightThroughCLI(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, "agent:\n  preset: claude\n  command: no-such-agent-cli\n")
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	for i := 0; i < 2; i++ {
		r := e.cli(binary, "advance", fmt.Sprint(n))
		if r.exit != 1 || !strings.Contains(r.stderr, "no-such-agent-cli not found") {
			t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
		}
	}
	e.untouched(n)
}
