package action

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
)

// usageSummary is the step summary's table of what the agent reported: each step of this run and each
// issue's total so far ("" when no agent reported anything).
func usageSummary(results []engine.Result) string {
	var b strings.Builder
	for _, res := range results {
		if res.Usage == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("### Agent usage\n\n| issue | step | turns | tokens in | tokens out | cost | issue total |\n|---|---|---|---|---|---|---|\n")
		}
		u := *res.Usage
		cost := "—"
		if u.CostUSD > 0 {
			cost = fmt.Sprintf("$%.4f", u.CostUSD)
		}
		step := string(res.Step)
		if u.HitTurnLimit {
			step += " (turn limit hit)"
		}
		if u.OverBudget {
			step += " (over max_cost)"
		}
		total := "—"
		if res.Total != nil {
			total = res.Total.String()
		}
		fmt.Fprintf(&b, "| #%d | %s | %d | %d | %d | %s | %s |\n", res.Issue, step, u.Turns, u.InputTokens, u.OutputTokens, cost, total)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// runUsage is what the agent reported over every step of this run.
func runUsage(results []engine.Result) agent.Usage {
	var total agent.Usage
	for _, res := range results {
		if res.Usage != nil {
			total = total.Add(*res.Usage)
		}
	}
	return total
}
