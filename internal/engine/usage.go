package engine

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
)

// explainTurnLimit adds to a failure that the agent had stopped at its turn limit, when it had: the likely
// reason it did not finish.
func (r *runner) explainTurnLimit(serr *StepError) {
	if r.usage == nil || !r.usage.HitTurnLimit || strings.Contains(serr.Reason, "turn limit") {
		return
	}
	serr.Reason += fmt.Sprintf(" (the agent stopped at its turn limit, agent.max_turns: %d; raise it if the step needs more)", r.cfg.Agent.MaxTurns)
}

// usageSection is the status comment's table of what the agent used, per step and in total: with ralph's
// model gateway, its figures (what the vendor's API billed, priced from ralph's table), otherwise what
// the CLI reported of itself. The budgets follow.
func usageSection(rec Record, cfg config.Config) string {
	if rec.Usage == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Agent usage\n\n| run | step | turns | model requests | tokens in (cached) | tokens out | cost | model |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rec.History {
		if r.Usage == nil {
			continue
		}
		step := Inert(string(r.Step))
		if r.Outcome != "done" {
			step += " (" + Inert(r.Outcome) + ")"
		}
		if r.Usage.HitTurnLimit {
			step += " — turn limit hit"
		}
		if r.Usage.OverBudget {
			step += " — over max_cost"
		}
		if r.Usage.Budget != "" {
			step += " — stopped at " + Inert(r.Usage.Budget)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.At.Format("2006-01-02 15:04"), step, usageCells(*r.Usage))
	}
	fmt.Fprintf(&b, "| **total** | | %s |\n", usageCells(*rec.Usage))
	if rec.Usage.Metered {
		b.WriteString("\nRequests, tokens and cost are what ralph's model gateway metered of the model's answers, priced from ralph's price table (`gateway.prices`); turns are the agent's own count.\n")
	}
	if bud := cfg.Budget; bud.Issue > 0 || bud.Day > 0 || cfg.Agent.MaxCost > 0 || cfg.Agent.MaxTokens > 0 {
		var parts []string
		if cfg.Agent.MaxCost > 0 {
			parts = append(parts, fmt.Sprintf("$%.2f per step (`agent.max_cost`)", cfg.Agent.MaxCost))
		}
		if cfg.Agent.MaxTokens > 0 {
			parts = append(parts, fmt.Sprintf("%s tokens per step (`agent.max_tokens`)", agent.Thousands(cfg.Agent.MaxTokens)))
		}
		if bud.Issue > 0 {
			parts = append(parts, fmt.Sprintf("$%.2f for this issue (`budget.issue`), of which $%.4f is spent", bud.Issue, rec.Usage.CostUSD))
		}
		if bud.Day > 0 {
			parts = append(parts, fmt.Sprintf("$%.2f a day for the repository (`budget.day`)", bud.Day))
		}
		fmt.Fprintf(&b, "\nBudgets: %s.\n", strings.Join(parts, "; "))
	}
	return b.String()
}

func usageCells(u agent.Usage) string {
	model := u.Model
	if model == "" {
		model = "—"
	}
	requests, in, cost := UsageFigures(u)
	return fmt.Sprintf("%d | %s | %s | %d | %s | %s", u.Turns, requests, in, u.OutputTokens, cost, strings.ReplaceAll(Inert(model), "|", "\\|"))
}

// UsageFigures are a usage's model requests, tokens in (with the cached ones in parentheses) and cost as
// ralph's usage tables show them, "—" for what was not reported: the status comment's and the Action's
// step summary.
func UsageFigures(u agent.Usage) (requests, in, cost string) {
	requests, cost = "—", "—"
	if u.Requests > 0 {
		requests = fmt.Sprint(u.Requests)
	}
	in = fmt.Sprint(u.InputTokens)
	if c := u.CacheReadTokens + u.CacheWriteTokens; c > 0 {
		in += fmt.Sprintf(" (%d)", c)
	}
	if u.CostUSD > 0 {
		cost = fmt.Sprintf("$%.4f", u.CostUSD)
	}
	return requests, in, cost
}
