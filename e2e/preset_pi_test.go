package e2e

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// piWorkdir is where pi's system prompt names its working directory, the worktree of the step.
var piWorkdir = regexp.MustCompile(`Current working directory: (/[^\\"\s]+)`)

// TestPresetPiRealCLI runs the research step through the built binary with `preset: pi`: the real pi
// (script/image.sh cli pi, installed by .ci/run from its lockfile), its anthropic provider pointed at ralph's
// model gateway by the models.json ralph writes in its HOME, talks to a scripted Anthropic model on loopback
// that has it write the document with its write tool; ralph commits it and records what the gateway
// metered, which is what the model billed.
func TestPresetPiRealCLI(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by pi for ralph.\n"
	e, model, r := anthropicPresetResearch(t, "pi", content)
	turns, b, u := researchCommitted(t, e, model, r, "pi", content)
	if turns != 2 || u.Turns != turns || !u.Metered || u.Requests != b.Requests || u.Requests != turns ||
		u.InputTokens != b.InputTokens || u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens ||
		math.Abs(u.CostUSD-float64(turns)*perAnswer(t)) > 1e-9 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v, $%.6f an answer", u, turns, b, perAnswer(t))
	}
	if !strings.Contains(r.stdout, "pi: started (anthropic/claude-sonnet-4-5)") || !strings.Contains(r.stdout, "✎ write ") {
		t.Errorf("the log does not show pi's events as progress:\n%s", r.stdout)
	}
}

// TestPresetPiRealCLIBudget: at agent.max_cost ralph's gateway refuses pi's second request, the first
// answer having gone over it; the issue goes to a person with the figures.
func TestPresetPiRealCLIBudget(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten before the budget was reached.\n"
	e, model, r := anthropicPresetResearch(t, "pi", content, "  max_cost: "+ftoa(perAnswer(t)/2)+"\n")
	if r.exit != 0 || r.outputs["state"] != "human-needed" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if model.Turns() != 1 {
		t.Errorf("the model answered %d agent turns, want 1: the gateway refuses the rest", model.Turns())
	}
	if rec := e.record(1); !strings.Contains(rec.Reason, "raise `agent.max_cost`") || rec.Usage == nil || rec.Usage.Requests != model.Billed().Requests {
		t.Errorf("the record: %s, %+v; the model billed %+v", rec.Reason, rec.Usage, model.Billed())
	}
}

// TestPresetPiRealCLIImplement: the real pi goes through a whole flow up to its first implement phase
// (research, plan, review, phase 1), each step's model calls through ralph's gateway and metered.
func TestPresetPiRealCLIImplement(t *testing.T) {
	t.Parallel()
	e, model, _ := implementPhaseFlow(t, "pi", piWorkdir, "")
	checkImplementPhase(t, e, model, "pi")
}
