package session

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
)

// The budgets, named by the settings that set them.
const (
	BudgetStepCost   = "agent.max_cost"
	BudgetStepTokens = "agent.max_tokens"
	BudgetIssue      = "budget.issue"
	BudgetDay        = "budget.day"
)

// BudgetError is a step whose agent's model requests ralph's gateway refused at a budget, or whose budget
// was spent before the agent started. The issue goes to a person, with the figures and what to raise.
type BudgetError struct {
	Limit  gateway.Limit
	Before bool        // reached before the agent ran: the agent did not run
	Spent  agent.Usage // what this step's agent spent
	Kept   string      // what of the step's work ralph kept, for the person
}

func (b *BudgetError) Error() string {
	if b.Before {
		return "the model budget is spent (" + b.Limit.Why + ")"
	}
	return "the model budget was reached (" + b.Limit.Why + ")"
}

// limits are the run's budgets: the step's as configured, the issue's and the day's as what remains of
// them (zero or less: spent).
func (r *Session) limits(ctx context.Context) ([]gateway.Limit, error) {
	a, b := r.cfg.Agent, r.cfg.Budget
	var limits []gateway.Limit
	if a.MaxCost > 0 {
		limits = append(limits, gateway.Limit{Name: BudgetStepCost, Cost: a.MaxCost, Why: fmt.Sprintf("agent.max_cost is %s per step", dollars(a.MaxCost))})
	}
	if a.MaxTokens > 0 {
		limits = append(limits, gateway.Limit{Name: BudgetStepTokens, Tokens: a.MaxTokens, Why: fmt.Sprintf("agent.max_tokens is %s tokens per step", agent.Thousands(a.MaxTokens))})
	}
	if b.Issue > 0 {
		spent := 0.0
		if r.spent != nil {
			spent = r.spent()
		}
		limits = append(limits, remaining(BudgetIssue, b.Issue, spent,
			fmt.Sprintf("budget.issue is %s for this issue, which had spent $%.4f before this step", dollars(b.Issue), spent)))
	}
	if b.Day > 0 {
		if r.ledger == nil {
			return nil, fmt.Errorf("budget.day needs ralph's repository, which this run has not")
		}
		d, err := r.ledger.Today(ctx)
		if err != nil {
			return nil, err
		}
		limits = append(limits, remaining(BudgetDay, b.Day, d.CostUSD,
			fmt.Sprintf("budget.day is %s a day for the repository, which had spent $%.4f on %s (UTC) before this step", dollars(b.Day), d.CostUSD, d.Date)))
	}
	return limits, nil
}

// remaining is a budget of total dollars of which spent are gone; a spent budget has a cost of -1.
func remaining(name string, total, spent float64, why string) gateway.Limit {
	left := total - spent
	if left <= 0 {
		left = -1
	}
	return gateway.Limit{Name: name, Cost: left, Why: why}
}

func describeLimits(limits []gateway.Limit) string {
	if len(limits) == 0 {
		return " (no budget)"
	}
	var parts []string
	for _, l := range limits {
		if l.Tokens > 0 {
			parts = append(parts, fmt.Sprintf("%s tokens left of %s", agent.Thousands(l.Tokens), l.Name))
		} else {
			parts = append(parts, fmt.Sprintf("$%.4f left of %s", l.Cost, l.Name))
		}
	}
	return "; " + strings.Join(parts, ", ")
}

// BudgetReason says, for the issue's comment and record, which budget stopped the step (of issue n), the
// figures, what was kept and how to go on.
func BudgetReason(n int, be *BudgetError) string {
	var b strings.Builder
	if be.Before {
		fmt.Fprintf(&b, "The model budget is spent, so the agent did not run: %s.", be.Limit.Why)
	} else {
		s := be.Spent
		fmt.Fprintf(&b, "The agent's model spending reached a budget, and ralph's model gateway refused its further requests: %s. This step spent $%.4f in %d model request%s (%s tokens in, %s out), as the gateway metered them.",
			be.Limit.Why, s.CostUSD, s.Requests, agent.Plural(s.Requests), agent.Thousands(s.InputTokens), agent.Thousands(s.OutputTokens))
	}
	if be.Kept != "" {
		b.WriteString(" " + be.Kept)
	}
	how := map[string]string{
		BudgetStepCost:   "raise `agent.max_cost` in `.github/ralph.yml`",
		BudgetStepTokens: "raise `agent.max_tokens` in `.github/ralph.yml`",
		BudgetIssue:      "raise `budget.issue` in `.github/ralph.yml`",
		BudgetDay:        "wait for the next UTC day, or raise `budget.day` in `.github/ralph.yml`",
	}[be.Limit.Name]
	fmt.Fprintf(&b, " To go on, %s, then say `/ralph retry` (or run `gh ralph retry %d`).", how, n)
	return b.String()
}

// dollars writes a budget as configured: cents, or as many decimals as a smaller amount needs (up to six).
func dollars(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	switch {
	case len(frac) <= 2:
		return "$" + whole + "." + frac + strings.Repeat("0", 2-len(frac))
	case len(frac) > 6:
		return "$" + strconv.FormatFloat(x, 'f', 6, 64)
	}
	return "$" + s
}
