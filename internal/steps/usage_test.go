package steps

import (
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestStatusShowsUsage(t *testing.T) {
	t.Parallel()
	var rec Record
	at := time.Date(2026, 11, 22, 1, 2, 0, 0, time.UTC)
	rec.Note(Entry{Step: workflow.Research, At: at, Outcome: "done", Usage: &agent.Usage{Turns: 2, InputTokens: 2000, OutputTokens: 100, CostUSD: 0.01, Model: "claude-x"}})
	rec.Note(Entry{Step: workflow.Plan, At: at.Add(time.Hour), Outcome: "failed", Usage: &agent.Usage{Turns: 1, InputTokens: 1000, OutputTokens: 50, Model: "claude-x", HitTurnLimit: true}})
	rec.Note(Entry{Step: workflow.Enroll, At: at, Outcome: "done"})
	if want := (agent.Usage{Turns: 3, InputTokens: 3000, OutputTokens: 150, CostUSD: 0.01, Model: "claude-x"}); rec.Usage == nil || *rec.Usage != want {
		t.Fatalf("total = %+v, want %+v", rec.Usage, want)
	}
	rec.State = workflow.ReadyForPlan
	body := Workflow().RenderStatus(1, rec, config.Default(), Links{}, Facts{})
	for _, want := range []string{
		"### Agent usage",
		"| 2026-11-22 01:02 | research | 2 | — | 2000 | 100 | $0.0100 | claude-x |",
		"| 2026-11-22 02:02 | plan (failed) — turn limit hit | 1 | — | 1000 | 50 | — | claude-x |",
		"| **total** | | 3 | — | 3000 | 150 | $0.0100 | claude-x |",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, body)
		}
	}
	back, ok, err := record.Parse(body)
	if err != nil || !ok || back.Usage == nil || back.History[0].Usage == nil || back.History[0].Usage.Turns != 2 {
		t.Errorf("usage did not survive the record: %+v, %v, %v", back.Usage, ok, err)
	}
}

// With the gateway, the table shows its figures (requests, cached tokens), says whose they are, and says
// which budget stopped a run and how much of the issue's is spent.
func TestStatusShowsMeteredUsage(t *testing.T) {
	t.Parallel()
	var rec Record
	at := time.Date(2026, 11, 22, 1, 2, 0, 0, time.UTC)
	rec.Note(Entry{Step: workflow.Research, At: at, Outcome: "budget reached", Usage: &agent.Usage{Turns: 1, Requests: 3, InputTokens: 3000, CacheReadTokens: 600, OutputTokens: 150, CostUSD: 0.0123, Model: "claude-sonnet-4-5", Metered: true, Budget: "budget.issue"}})
	rec.State = workflow.HumanNeeded
	cfg := config.Default()
	cfg.Budget.Issue, cfg.Agent.MaxCost = 0.01, 0.5
	body := Workflow().RenderStatus(1, rec, cfg, Links{}, Facts{})
	for _, want := range []string{
		"| 2026-11-22 01:02 | research (budget reached) — stopped at budget.issue | 1 | 3 | 3000 (600) | 150 | $0.0123 | claude-sonnet-4-5 |",
		"what ralph's model gateway metered",
		"Budgets: $0.50 per step (`agent.max_cost`); $0.01 for this issue (`budget.issue`), of which $0.0123 is spent.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, body)
		}
	}
	if rec.Usage.Budget != "" {
		t.Errorf("the total says a budget stopped it: %+v", rec.Usage)
	}
}
