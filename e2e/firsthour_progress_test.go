package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// sgr is a colour escape (Select Graphic Rendition); clearLine is the status line's erasing.
var (
	sgr       = regexp.MustCompile("\x1b\\[[0-9;]*m")
	clearLine = "\r\x1b[K"
)

// screen is what a terminal shows once the output has been written to it, and each status line that was
// drawn and then cleared: the progress line is redrawn in place ("\r\x1b[K"), so it is not in the
// screen's text once it ends, but a person watched it.
func screen(out string) (text string, frames []string) {
	out = sgr.ReplaceAllString(out, "")
	var lines []string
	cur := ""
	for len(out) > 0 {
		if strings.HasPrefix(out, clearLine) {
			if cur != "" {
				frames = append(frames, cur)
			}
			cur, out = "", out[len(clearLine):]
			continue
		}
		if out[0] == '\n' {
			lines, cur, out = append(lines, cur), "", out[1:]
			continue
		}
		cur, out = cur+out[:1], out[1:]
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return strings.Join(lines, "\n") + "\n", frames
}

// While an agent runs, gh ralph's progress line on a terminal shows the tokens and cost so far, as ralph's
// model gateway metered them, next to the time; and the end of the agent's run is said once (the group's
// end line, not a second "finished in" line). The screen a person reads is checked against a golden file
// (go test ./e2e -run TestProgressLine -update rewrites it).
func TestProgressLine(t *testing.T) {
	t.Parallel()
	model := agenttest.NewAnthropic(t, modelKey, "", "unused")
	e := newCLIEnv(t, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n  timeout: 2m\n"+
		"  env:\n    RALPH_TEST_CONTROL: \"\"\n    RALPH_TEST_MODELCALL: "+yamlQuote(modelcall)+"\n"+
		"gateway:\n  vendor: anthropic\n  upstream: "+model.URL+"\n")
	e.vars["ANTHROPIC_API_KEY"] = modelKey
	// A terminal as far as ralph knows: the status line is drawn (CLICOLOR_FORCE, as gh's own commands).
	e.vars["CLICOLOR_FORCE"] = "1"
	// One model request, then time for the status line to be redrawn with what it cost.
	e.setControl("extra_research", `"$RALPH_TEST_MODELCALL" message >/dev/null; sleep 1`)
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

	r := e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	text, frames := screen(r.stderr)

	u := agent.Usage{InputTokens: agenttest.InputTokens, OutputTokens: agenttest.OutputTokens}
	metered := fmt.Sprintf(" · %s tokens · $%.4f", agent.Thousands(u.InputTokens+u.OutputTokens), perAnswer(t))
	status := regexp.MustCompile(`^. agent: research for #1 — \d+s` + regexp.QuoteMeta(metered) + `$`)
	found := false
	for _, f := range frames {
		found = found || status.MatchString(f)
	}
	if !found {
		t.Errorf("no status line showed the agent's tokens and cost so far (%q); the lines drawn:\n%s", metered, strings.Join(frames, "\n"))
	}

	text = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(text, "127.0.0.1:PORT")
	text = regexp.MustCompile(`(?m)^the agent runs as .*$`).ReplaceAllString(text, "the agent runs as …")
	text = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`).ReplaceAllString(text, "Ns")
	firstHourGoldenIn(t, "progress", "advance-tty.golden", text)
}

// On a terminal, gh ralph speaks ralph's palette (the step's ✓ green); with NO_COLOR, the same terminal gets
// no colour at all, on stdout or stderr. The terminal is a pseudo-terminal (script(1)).
func TestColourOnATerminal(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed (util-linux): no pseudo-terminal to run gh ralph on")
	}
	e := newCLIEnv(t, agentConfig(t))
	for _, tt := range []struct {
		noColor bool
		want    string
	}{
		{false, "\x1b[32m✓\x1b[0m #1 research"},
		{true, "✓ #1 research"},
	} {
		n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
		e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
		cmd := exec.Command(script, "-qefc", binary+" advance "+fmt.Sprint(n), "/dev/null")
		cmd.Dir = e.work
		cmd.Env = append(e.environ(), "TERM=xterm-256color")
		if tt.noColor {
			cmd.Env = append(cmd.Env, "NO_COLOR=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("advance on a terminal: %v\n%q", err, out)
		}
		want := strings.Replace(tt.want, "#1", "#"+fmt.Sprint(n), 1)
		if !strings.Contains(string(out), want) {
			t.Errorf("NO_COLOR=%v: the terminal shows no %q:\n%q", tt.noColor, want, out)
		}
		if tt.noColor && sgr.Match(out) {
			t.Errorf("NO_COLOR: the terminal got colour:\n%q", out)
		}
	}
}
