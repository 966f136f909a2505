package action

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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

// The step summary fits GitHub's 1 MiB whatever the run did: each outcome and the error are cut with a
// count, at most 50 refused hosts an issue are named, and the whole is cut last.
func TestSummaryBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("`a/path` (a symlink to `../x`, which resolves outside the repository), ", 2000)
	var hosts []string
	for i := range 400 {
		hosts = append(hosts, fmt.Sprintf("h%03d.%s.example.test", i, strings.Repeat("x", 60)))
	}
	one := &runner{ev: Environment{StepSummary: "summary"}, results: []engine.Result{{Issue: 1, Step: "implement", Message: long, Refused: hosts}}}
	got := one.summaryMarkdown("", errors.New(long))
	if n := utf8.RuneCountInString(got); n > 3*summaryMessage+summaryError+len(hosts[0])*2*50+4000 {
		t.Errorf("one issue's summary is %d characters", n)
	}
	if !strings.Contains(got, "characters more)") || !strings.Contains(got, "and 350 more (the run's log names them)") || strings.Contains(got, hosts[50]) {
		t.Errorf("the long message, error and hosts are not cut with a count:\n%.3000s", got)
	}
	many := &runner{ev: Environment{StepSummary: "summary"}}
	for i := range 2000 {
		many.results = append(many.results, engine.Result{Issue: i + 1, Step: "implement", Message: long, Refused: hosts})
	}
	got = many.summaryMarkdown("", nil)
	if len(got) > summaryLimit || !strings.Contains(got, "the summary is cut here") || !utf8.ValidString(got) {
		t.Errorf("a sweep's summary is %d bytes (limit %d), cut note %v, valid UTF-8 %v", len(got), summaryLimit, strings.Contains(got, "the summary is cut here"), utf8.ValidString(got))
	}
}
