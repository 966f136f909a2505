package session

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// The issue's budget is what remains of budget.issue after what the issue spent before the step, read when
// the agent starts; a spent one stops the agent before it runs, and the reason says what to raise.
func TestLimitsIssueRemaining(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Budget.Issue = 5
	for _, tt := range []struct {
		spent, want float64
	}{{0, 5}, {4.5, 0.5}, {5, -1}, {7, -1}} {
		s := New(Options{Config: cfg, Spent: func() float64 { return tt.spent }})
		limits, err := s.limits(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(limits) != 1 || limits[0].Name != BudgetIssue || limits[0].Cost != tt.want {
			t.Errorf("spent %v: limits %+v, want budget.issue at %v", tt.spent, limits, tt.want)
		}
	}
	s := New(Options{Config: cfg, Spent: func() float64 { return 6 }})
	limits, _ := s.limits(context.Background())
	reason := BudgetReason(7, &BudgetError{Limit: limits[0], Before: true})
	for _, want := range []string{"so the agent did not run", "had spent $6.0000 before this step", "raise `budget.issue`", "gh ralph retry 7"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q lacks %q", reason, want)
		}
	}
}

// budget.day without ralph's ledger cannot be kept: the session says so rather than run unbounded.
func TestLimitsDayNeedsLedger(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Budget.Day = 1
	if _, err := New(Options{Config: cfg}).limits(context.Background()); err == nil || !strings.Contains(err.Error(), "budget.day needs ralph's repository") {
		t.Errorf("limits without a ledger: %v", err)
	}
}
