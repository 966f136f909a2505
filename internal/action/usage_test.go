package action

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestUsageSummary(t *testing.T) {
	t.Parallel()
	if got := usageSummary([]engine.Result{{Issue: 1, Step: workflow.Merge}}); got != "" {
		t.Errorf("no usage: %q, want nothing", got)
	}
	got := usageSummary([]engine.Result{{
		Issue: 7, Step: workflow.Research,
		Usage: &agent.Usage{Turns: 2, InputTokens: 2000, OutputTokens: 100, CostUSD: 0.0075, Model: "m", HitTurnLimit: true},
		Total: &agent.Usage{Turns: 5, InputTokens: 9000, OutputTokens: 400, CostUSD: 0.02, Model: "m"},
	}})
	want := "| #7 | research (turn limit hit) | 2 | — | 2000 | 100 | $0.0075 | 5 turns, 9,000 in / 400 out tokens, $0.0200 (m) |"
	if !strings.Contains(got, "### Agent usage") || !strings.Contains(got, want) {
		t.Errorf("summary:\n%s\nwant the line\n%s", got, want)
	}
	got = usageSummary([]engine.Result{{
		Issue: 8, Step: workflow.Plan,
		Usage: &agent.Usage{Turns: 1, Requests: 3, InputTokens: 3000, CacheReadTokens: 600, OutputTokens: 150, CostUSD: 0.0123, Model: "m", Metered: true, Budget: "budget.day"},
		Total: &agent.Usage{Turns: 1, Requests: 3, InputTokens: 3000, CacheReadTokens: 600, OutputTokens: 150, CostUSD: 0.0123, Model: "m", Metered: true},
	}})
	want = "| #8 | plan (stopped at budget.day) | 1 | 3 | 3000 (600) | 150 | $0.0123 | 1 turn, 3 model requests, 3,000 in (600 cached) / 150 out tokens, $0.0123 (m) |"
	if !strings.Contains(got, want) || !strings.Contains(got, "as ralph's model gateway metered them") {
		t.Errorf("summary:\n%s\nwant the line\n%s", got, want)
	}
}

// The step summary names each refused host once, inert (the agent chose it), with the config line.
func TestRefusedSummary(t *testing.T) {
	t.Parallel()
	if got := refusedSummary([]engine.Result{{Issue: 1, Step: "research"}}); got != "" {
		t.Errorf("no host refused, summary %q", got)
	}
	got := refusedSummary([]engine.Result{{Issue: 7, Step: "implement", Refused: []string{"exfil.example.test", "a`@mona<!--"}}})
	if strings.Count(got, "`exfil.example.test`") != 1 || !strings.Contains(got, `network: {allow: ["exfil.example.test", `) {
		t.Errorf("summary:\n%s", got)
	}
	for _, bad := range []string{"@mona", "<!--", "a`@"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary holds %q as the agent wrote it:\n%s", bad, got)
		}
	}
}
