package engine

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
)

// noteUsage keeps what the agent reported of its run for the record and logs it.
func (e *Engine) noteUsage(ic *issue, command string, u *agent.Usage) {
	if u == nil {
		return
	}
	ic.usage = u
	e.Log.Infof("agent %s: %s", command, u)
}

// keepAfterTurnLimit: an agent stopped at its turn limit has not failed by that alone; the step's
// postcondition decides whether what it produced counts.
func keepAfterTurnLimit(res agent.Result) bool {
	return res.Usage != nil && res.Usage.HitTurnLimit && !res.Usage.OverBudget && !res.TimedOut && !res.Interrupted
}

// explainTurnLimit adds to a failure that the agent had stopped at its turn limit, when it had: the likely
// reason it did not finish.
func (e *Engine) explainTurnLimit(ic *issue, serr *StepError) {
	if ic.usage == nil || !ic.usage.HitTurnLimit || strings.Contains(serr.Reason, "turn limit") {
		return
	}
	serr.Reason += fmt.Sprintf(" (the agent stopped at its turn limit, agent.max_turns: %d; raise it if the step needs more)", e.Config.Agent.MaxTurns)
}

func (r *Record) addUsage(u *agent.Usage) {
	if u == nil {
		return
	}
	total := agent.Usage{}
	if r.Usage != nil {
		total = *r.Usage
	}
	total = total.Add(*u)
	// The limits describe single runs, not the total.
	total.HitTurnLimit, total.OverBudget = false, false
	r.Usage = &total
}

// usageSection is the status comment's table of what the agent reported, per step and in total.
func usageSection(rec Record) string {
	if rec.Usage == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Agent usage\n\n| run | step | turns | tokens in | tokens out | cost | model |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rec.History {
		if r.Usage == nil {
			continue
		}
		step := string(r.Step)
		if r.Outcome != "done" {
			step += " (" + r.Outcome + ")"
		}
		if r.Usage.HitTurnLimit {
			step += " — turn limit hit"
		}
		if r.Usage.OverBudget {
			step += " — over max_cost"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.At.Format("2006-01-02 15:04"), step, usageCells(*r.Usage))
	}
	fmt.Fprintf(&b, "| **total** | | %s |\n", usageCells(*rec.Usage))
	return b.String()
}

func usageCells(u agent.Usage) string {
	cost := "—"
	if u.CostUSD > 0 {
		cost = fmt.Sprintf("$%.4f", u.CostUSD)
	}
	model := u.Model
	if model == "" {
		model = "—"
	}
	return fmt.Sprintf("%d | %d | %d | %s | %s", u.Turns, u.InputTokens, u.OutputTokens, cost, strings.ReplaceAll(model, "|", "\\|"))
}
