package action

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// usageSummary is the step summary's table of what the agent used: each step of this run and each
// issue's total so far ("" when no agent ran). With ralph's model gateway the requests, tokens and cost are
// the gateway's figures; without it, the CLI's report of itself.
func usageSummary(results []engine.Result) string {
	var b strings.Builder
	metered := false
	for _, res := range results {
		if res.Usage == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("### Agent usage\n\n| issue | step | turns | model requests | tokens in (cached) | tokens out | cost | issue total |\n|---|---|---|---|---|---|---|---|\n")
		}
		metered = metered || res.Usage.Metered
		u := *res.Usage
		step := string(res.Step)
		if u.HitTurnLimit {
			step += " (turn limit hit)"
		}
		if u.OverBudget {
			step += " (over max_cost)"
		}
		if u.Budget != "" {
			step += " (stopped at " + u.Budget + ")"
		}
		requests, in, cost := record.UsageFigures(u)
		total := "—"
		if res.Total != nil {
			total = res.Total.String()
		}
		fmt.Fprintf(&b, "| #%d | %s | %d | %s | %s | %d | %s | %s |\n", res.Issue, step, u.Turns, requests, in, u.OutputTokens, cost, total)
	}
	if metered {
		b.WriteString("\nRequests, tokens and cost as ralph's model gateway metered them.\n")
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

// refusedSummary is the step summary's list of the hosts ralph's network proxy refused the agent, each
// once per issue, with the line of the config that would allow them ("" when none was refused). The agent
// chose them: they are quoted inert.
func refusedSummary(results []engine.Result) string {
	// At most refusedHosts hosts an issue: the agent chooses how many it asks for.
	const refusedHosts = 50
	var b strings.Builder
	for _, res := range results {
		if len(res.Refused) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("### Network refused\n\nralph's network proxy refused the agent these hosts (not on the allow-list, `network.allow`):\n\n")
		}
		refused := res.Refused
		if len(refused) > refusedHosts {
			refused = refused[:refusedHosts]
		}
		codes, quoted := record.RefusedHosts(refused)
		var hosts []string
		for _, c := range codes {
			hosts = append(hosts, "`"+c+"`")
		}
		more := ""
		if n := len(res.Refused) - len(refused); n > 0 {
			more = fmt.Sprintf(" and %d more (the run's log names them)", n)
		}
		fmt.Fprintf(&b, "- #%d (%s): %s%s — to allow them, in `.github/ralph.yml`: `network: {allow: [%s]}`\n", res.Issue, orDash(string(res.Step)), strings.Join(hosts, ", "), more, strings.Join(quoted, ", "))
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// unverifiedSummary says which commits ralph pushed that GitHub did not verify.
func unverifiedSummary(results []engine.Result) string {
	var b strings.Builder
	for _, res := range results {
		for _, u := range res.Unverified {
			if b.Len() == 0 {
				b.WriteString("### Commits not verified\n\nGitHub made these commits of ralph's but did not verify them (on GitHub Enterprise Server, the site admin turns on web commit signing):\n\n")
			}
			fmt.Fprintf(&b, "- #%d (%s): `%s`\n", res.Issue, orDash(string(res.Step)), inert.CodeText(u))
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
