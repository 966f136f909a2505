package e2e

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The Action's door run by hand (no GITHUB_ACTIONS) prints the agent's output on a person's terminal: a
// hostile agent's escape sequences (the window's title, clearing the screen, OSC 52 setting the clipboard,
// a C1 control) and workflow command lines must reach it inert, as they do through gh ralph advance; so
// must a hostile issue title, and the failure the agent's output ends up in.
func TestHostileByHandOutputInert(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	e.setControl("extra_research", `printf '\033]0;pwned\007\033[2J\033]52;c;cHduZWQ=\007\302\233Jdone\n'
printf '::add-mask::ralph\n  ::set-output name=step::pwned\nlog ##[error]pwned\n'
printf '::error::half a line'
printf 'and the rest\n'
exit 3
`)
	n := e.srv.CreateIssue(maintainer, "Greet \x1b[31mred\x1b[0m\n::warning::title", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.byHand("test-token", "INPUT_ISSUE="+itoa(n))
	out := r.stdout + r.stderr
	if !strings.Contains(out, "^[]0;pwned^G") {
		t.Errorf("the agent's output is not shown (inert):\n%s", out)
	}
	for _, c := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(out, c) {
			t.Errorf("a control character %q reached the output raw:\n%q", c, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.Contains(line, "##[") {
			t.Errorf("a workflow command line reached the output: %q", line)
		}
	}
}
