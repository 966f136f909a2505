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
			want:   "agent.env passes MY_API_KEY through, but it is not set: give it to ralph's step in the workflow (env: MY_API_KEY: ${{ secrets.MY_API_KEY }}) and store the secret (gh secret set MY_API_KEY)",
		},
		{
			name:   "model key missing for the gateway",
			config: "agent:\n  preset: command\n  command: true\ngateway:\n  vendor: anthropic\n",
			env:    map[string]string{"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": ""},
			want:   "ralph's model gateway needs the anthropic key in ralph's environment, as ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN",
		},
		{
			name:   "verify program missing",
			config: "agent:\n  preset: command\n  command: true\nverify:\n  - no-such-toolchain test ./...\n",
			want:   "verify runs `no-such-toolchain test ./...`, but no-such-toolchain is not on the PATH the agent and verify run with",
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

// The workflow that started the run is checked before anything is written, at no request's cost: one
// that does not give the Actions token what ralph needs, or that the chain cannot dispatch, fails the run
// with what to change, and the issue is left alone.
func TestStartChecksTheWorkflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	e.pushFile(".github/workflows/ralph.yml", "name: ralph\non:\n  issues:\n    types: [labeled]\npermissions:\n  contents: write\n  issues: write\njobs:\n  ralph:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	before := len(e.srv.Requests())
	r := e.label(n, maintainer)
	if r.exit != 1 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	for _, want := range []string{
		"::error::.github/workflows/ralph.yml has no workflow_dispatch trigger with an issue input",
		"::error::.github/workflows/ralph.yml does not give the Actions token pull-requests: write, actions: write: set pull-requests: write, actions: write under permissions:",
		"ralph left the issue alone",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the log does not say %q:\n%s", want, r.stdout)
		}
	}
	e.untouched(n)
	for _, req := range e.srv.Requests()[before:] {
		if req.Write() {
			t.Errorf("the run wrote: %s %s", req.Method, req.Path)
		}
	}
}

// A new user's first gh ralph advance, with the agent CLI not installed and no key exported: what is
// wrong and what to do, one line each, and the issue left alone (a second try does not send it to Human
// Needed).
func TestFirstAdvanceWithoutTheAgent(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, "agent:\n  preset: claude\n  env:\n    ANTHROPIC_API_KEY: \"\"\n")
	e.vars["PATH"] = "/usr/bin:/bin"
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	for i := 0; i < 2; i++ {
		r := e.cli(binary, "advance", fmt.Sprint(n))
		want := "the agent cannot run here, so ralph left the issue alone:\n" +
			"  X claude is not installed (not found on the agent's PATH): install it with `npm install -g @anthropic-ai/claude-code`, or set agent.command to how to run it\n" +
			"  X agent.env passes ANTHROPIC_API_KEY through, but it is not set here: export ANTHROPIC_API_KEY=… in your shell before gh ralph advance (only needed to run steps on this machine)\n" +
			"Nothing on the issue changed. gh ralph doctor checks the rest of the setup.\n"
		if r.exit != 1 || !strings.HasSuffix(r.stderr, want) {
			t.Fatalf("advance: exit %d\n%s\nwant stderr ending\n%s", r.exit, r.stderr, want)
		}
	}
	e.untouched(n)
}
