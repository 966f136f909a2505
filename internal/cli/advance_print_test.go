package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// What a person reads of a step says each thing once: a transition once on its line, a state that did not
// change without an arrow to itself, the step's usage only where the engine logs it (the issue's total here).
func TestPrintResultSaysItOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tty  bool
		res  engine.Result
		err  error
		want string
	}{
		{"a transition", true, engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ReadyForPlan, Message: "research: Research Needed → Ready for Plan"},
			nil, "✓ #1 research: Research Needed → Ready for Plan\n"},
		{"a dry run", true, engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ResearchNeeded, Message: "would run research on #1 (Research Needed)"},
			nil, "? #1 research: Research Needed — would run research on #1 (Research Needed)\n"},
		{"not enrolled", true, engine.Result{Issue: 3, Message: "#3 is not enrolled"},
			nil, "· #3 no step: not enrolled — #3 is not enrolled\n"},
		{"a phase", true, engine.Result{Issue: 1, Step: workflow.Implement, From: workflow.InProgress, State: workflow.InProgress, Message: "phase 1 of 2 done"},
			nil, "✓ #1 implement: In Progress — phase 1 of 2 done\n"},
		{"a failure", true, engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ResearchNeeded},
			errors.New("research failed: the agent exited with code 1"), "✗ #1 research: Research Needed\n"},
		// Off a terminal the row is data; the error is said once, on stderr (Exit).
		{"a failure, off a terminal", false, engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ResearchNeeded},
			errors.New("research failed: the agent exited with code 1"), "1\tresearch\tresearch-needed\tresearch-needed\tfailed\t\t\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printResult(&b, tt.tty, false, tt.res, tt.err)
		if got := b.String(); got != tt.want {
			t.Errorf("%s: printResult wrote %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPrintUsageOnlyTheTotal(t *testing.T) {
	t.Parallel()
	step := &agent.Usage{Turns: 3, InputTokens: 1000, OutputTokens: 200, CostUSD: 0.01}
	total := &agent.Usage{Turns: 9, InputTokens: 5000, OutputTokens: 900, CostUSD: 0.05}
	var b bytes.Buffer
	printUsage(&b, engine.Result{Issue: 1, Usage: step, Total: total})
	if got, want := b.String(), "#1 so far: "+total.String()+"\n"; got != want {
		t.Errorf("printUsage wrote %q, want %q (the engine logs the step's own usage)", got, want)
	}
	b.Reset()
	printUsage(&b, engine.Result{Issue: 1, Usage: step, Total: &agent.Usage{Turns: 3, InputTokens: 1000, OutputTokens: 200, CostUSD: 0.01}})
	if got := b.String(); got != "" {
		t.Errorf("printUsage after the issue's first step wrote %q, want nothing (the step's usage is its total)", got)
	}
	b.Reset()
	printUsage(&b, engine.Result{Issue: 1, Usage: step})
	if got := b.String(); got != "" {
		t.Errorf("printUsage without a total wrote %q, want nothing", got)
	}
}

// SECURITY: a step's message and an error may quote what others wrote (a phase's title, an issue's title, a
// host the agent asked for): neither reaches the terminal with a control character it would act on.
func TestResultAndErrorPrintedInert(t *testing.T) {
	hostile := "\x1b]0;pwned\x07\x1b[2J\u009b31m"
	for _, tty := range []bool{true, false} {
		var b bytes.Buffer
		printResult(&b, tty, false, engine.Result{Issue: 1, Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInReview, Message: "plan: " + hostile}, nil)
		if strings.ContainsAny(b.String(), "\x1b\x07\u009b") || !strings.Contains(b.String(), "^[]0;pwned^G") {
			t.Errorf("printResult (terminal %v) wrote %q", tty, b.String())
		}
	}
	var b bytes.Buffer
	Exit(errors.New("reading #1 "+hostile+"\rdone"), &b)
	if strings.ContainsAny(b.String(), "\x1b\x07\u009b\r") || !strings.Contains(b.String(), "^[]0;pwned^G") {
		t.Errorf("Exit wrote %q", b.String())
	}
}
