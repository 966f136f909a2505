package e2e

import (
	"strings"
	"testing"
)

// TestPresetOpencodeRealCLI runs the research step through the built binary with `preset: opencode`: the
// real opencode (script/image.sh cli opencode, installed by .ci/run), its anthropic provider pointed at
// ralph's model gateway, talks to a scripted Anthropic model on loopback that has it write the document with
// its write tool; ralph commits it and records what the gateway metered (opencode's side requests, such as
// the session's title, included).
func TestPresetOpencodeRealCLI(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by opencode for ralph.\n"
	e, model, r := anthropicPresetResearch(t, "opencode", content)
	turns, b, u := researchCommitted(t, e, model, r, "opencode", content)
	// Its side requests (the session's title) go to a smaller model, priced lower: the cost is more than
	// the agent's turns' and at most every request at the larger model's price.
	if turns != 2 || u.Turns != turns || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens ||
		u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens ||
		u.CostUSD < float64(turns)*perAnswer(t)-1e-9 || u.CostUSD > float64(b.Requests)*perAnswer(t)+1e-9 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v, at most $%.6f an answer", u, turns, b, perAnswer(t))
	}
	if !strings.Contains(r.stdout, "opencode: started (") {
		t.Errorf("the log does not show opencode's events as progress:\n%s", r.stdout)
	}
}

// TestPresetOpencodeRealCLIBudget: at agent.max_cost ralph's gateway refuses opencode's requests once the
// first agent turn's answer (and the side request for its title, sent alongside) went over it; the issue
// goes to a person with the figures.
func TestPresetOpencodeRealCLIBudget(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten before the budget was reached.\n"
	e, model, r := anthropicPresetResearch(t, "opencode", content, "  max_cost: "+ftoa(perAnswer(t)/2)+"\n")
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
