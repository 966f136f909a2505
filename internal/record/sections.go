package record

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// UsageSection is the status comment's table of what the agent used, per step and in total: with ralph's
// model gateway, its figures (what the vendor's API billed, priced from ralph's table), otherwise what
// the CLI reported of itself. The budgets follow.
func UsageSection(rec Record, cfg config.Config) string {
	if rec.Usage == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Agent usage\n\n| run | step | turns | model requests | tokens in (cached) | tokens out | cost | model |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rec.History {
		if r.Usage == nil {
			continue
		}
		step := inert.GitHub(string(r.Step))
		if r.Outcome != "done" {
			step += " (" + inert.GitHub(r.Outcome) + ")"
		}
		if r.Usage.HitTurnLimit {
			step += " — turn limit hit"
		}
		if r.Usage.OverBudget {
			step += " — over max_cost"
		}
		if r.Usage.Budget != "" {
			step += " — stopped at " + inert.GitHub(r.Usage.Budget)
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
	return fmt.Sprintf("%d | %s | %s | %d | %s | %s", u.Turns, requests, in, u.OutputTokens, cost, strings.ReplaceAll(inert.GitHub(model), "|", "\\|"))
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

// RefusedSection is the status comment's list of the hosts the issue's agent was refused, each once,
// quoted inert (the agent chose them), with the line of the config that would allow them.
func RefusedSection(rec Record) string {
	if len(rec.Refused) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Network refused\n\nralph's network proxy refused the agent these hosts (they are not on the allow-list, `network.allow`):\n\n")
	codes, allow := RefusedHosts(rec.Refused)
	for _, c := range codes {
		fmt.Fprintf(&b, "- `%s`\n", c)
	}
	fmt.Fprintf(&b, "\nIf the agent needs them, allow them in `.github/ralph.yml`:\n\n```yaml\nnetwork:\n  allow: [%s]\n```\n", strings.Join(allow, ", "))
	return b.String()
}

// RefusedLines are what a door prints of a run's refused hosts: each once, and the config line that would
// allow them; nil when none was refused.
func RefusedLines(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	codes, allow := RefusedHosts(hosts)
	var lines []string
	for _, c := range codes {
		lines = append(lines, "ralph's network proxy refused the agent `"+c+"`")
	}
	return append(lines, "to allow them, add to .github/ralph.yml: network.allow: ["+strings.Join(allow, ", ")+"]")
}

// RefusedHosts are refused hosts as ralph shows them: each as the text of a code span (inert: the agent
// chose them), and as the entry of network.allow that would allow it.
func RefusedHosts(hosts []string) (codes, allow []string) {
	for _, h := range hosts {
		c := inert.CodeText(h)
		codes = append(codes, c)
		allow = append(allow, strconv.Quote(c))
	}
	return codes, allow
}
