package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestStatusShowsUsage(t *testing.T) {
	t.Parallel()
	var rec Record
	at := time.Date(2026, 11, 22, 1, 2, 0, 0, time.UTC)
	rec.note(Run{Step: workflow.Research, At: at, Outcome: "done", Usage: &agent.Usage{Turns: 2, InputTokens: 2000, OutputTokens: 100, CostUSD: 0.01, Model: "claude-x"}})
	rec.note(Run{Step: workflow.Plan, At: at.Add(time.Hour), Outcome: "failed", Usage: &agent.Usage{Turns: 1, InputTokens: 1000, OutputTokens: 50, Model: "claude-x", HitTurnLimit: true}})
	rec.note(Run{Step: workflow.Enroll, At: at, Outcome: "done"})
	if want := (agent.Usage{Turns: 3, InputTokens: 3000, OutputTokens: 150, CostUSD: 0.01, Model: "claude-x"}); rec.Usage == nil || *rec.Usage != want {
		t.Fatalf("total = %+v, want %+v", rec.Usage, want)
	}
	rec.State = workflow.ReadyForPlan
	body := RenderStatus(1, rec, config.Default(), Links{})
	for _, want := range []string{
		"### Agent usage",
		"| 2026-11-22 01:02 | research | 2 | 2000 | 100 | $0.0100 | claude-x |",
		"| 2026-11-22 02:02 | plan (failed) — turn limit hit | 1 | 1000 | 50 | — | claude-x |",
		"| **total** | | 3 | 3000 | 150 | $0.0100 | claude-x |",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, body)
		}
	}
	back, ok, err := ParseRecord(body)
	if err != nil || !ok || back.Usage == nil || back.History[0].Usage == nil || back.History[0].Usage.Turns != 2 {
		t.Errorf("usage did not survive the record: %+v, %v, %v", back.Usage, ok, err)
	}
}
