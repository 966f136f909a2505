package e2e

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestPresetCopilotRealCLI runs the research step through the built binary with `preset: copilot`: the real
// GitHub Copilot CLI (script/image.sh cli copilot, installed by .ci/run), its bring-your-own-key provider
// pointed at ralph's model gateway, talks to a scripted Anthropic model on loopback that has it write the
// document with its create tool; ralph commits and posts it and records what the gateway metered. The
// model checks that it gets ralph's key, which only the gateway holds.
func TestPresetCopilotRealCLI(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by Copilot CLI for ralph.\n"
	e, model, r := anthropicPresetResearch(t, "copilot", content)
	turns, b, u := researchCommitted(t, e, model, r, "Copilot CLI", content)
	if turns != 2 || u.Turns != turns || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens ||
		u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens || math.Abs(u.CostUSD-float64(b.Requests)*perAnswer(t)) > 1e-9 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v, at $%.6f an answer", u, turns, b, perAnswer(t))
	}
	if !strings.Contains(r.stdout, "copilot: started (claude-sonnet-4-5)") {
		t.Errorf("the log does not show Copilot CLI's events as progress:\n%s", r.stdout)
	}
}

// TestPresetCopilotRealCLIBudget: at agent.max_cost ralph's gateway refuses Copilot CLI's second model
// request; the document it wrote in the first turn is kept, and the issue goes to a person with the figures.
func TestPresetCopilotRealCLIBudget(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten before the budget was reached.\n"
	e, model, r := anthropicPresetResearch(t, "copilot", content, "  max_cost: "+ftoa(perAnswer(t)/2)+"\n")
	if r.exit != 0 || r.outputs["state"] != "human-needed" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if model.Billed().Requests != 1 {
		t.Errorf("the model billed %d requests, want 1: the gateway refuses the rest", model.Billed().Requests)
	}
	if !strings.Contains(r.stdout, "budget reached") {
		t.Errorf("the log does not show ralph's reason:\n%s", r.stdout)
	}
	if rec := e.record(1); !strings.Contains(rec.Reason, "raise `agent.max_cost`") || rec.Usage == nil || rec.Usage.Requests != 1 {
		t.Errorf("the record: %s, %+v", rec.Reason, rec.Usage)
	}
}

// anthropicPresetResearch runs the label run of issue 1 with the preset (whose program is its name) against
// a scripted Anthropic model behind ralph's gateway; ralph holds the model key. It skips when the CLI is not
// installed.
func anthropicPresetResearch(t *testing.T, preset, content string, agentExtra ...string) (*env, *agenttest.Anthropic, result) {
	t.Helper()
	bin := agentsBin(t, preset)
	model := agenttest.NewAnthropic(t, modelKey, "", content)
	e := newEnv(t, `agent:
  preset: `+preset+`
  max_turns: `+strconv.Itoa(10)+`
  timeout: 3m
`+strings.Join(agentExtra, "")+`gateway:
  upstream: `+model.URL+`
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	p := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{env: map[string]string{
		"PATH":              bin + ":" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": modelKey,
	}})
	return e, model, p.wait()
}

// researchCommitted checks a research step that a real CLI ran against the scripted model: the issue is
// Ready for Plan, the document the model had the CLI write is on the branch, and the record holds usage;
// it returns the model's turns, what it billed and what ralph recorded.
func researchCommitted(t *testing.T, e *env, model *agenttest.Anthropic, r result, cli, content string) (int, agenttest.Billed, agent.Usage) {
	t.Helper()
	u := researchRecorded(t, e, r, cli, content, model.Problems())
	return model.Turns(), model.Billed(), u
}

// researchRecorded checks that the research run r ended well, with no problem the scripted models saw:
// the issue Ready for Plan, the document the model had cli write committed on the branch; it returns the
// usage ralph recorded.
func researchRecorded(t *testing.T, e *env, r result, cli, content string, problems []string) agent.Usage {
	t.Helper()
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research with %s: exit %d outputs %v\n%s%s", cli, r.exit, r.outputs, r.stdout, r.stderr)
	}
	for _, p := range problems {
		t.Errorf("scripted model: %s", p)
	}
	e.wantState(1, workflow.ReadyForPlan)
	_, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 {
		t.Fatalf("no research document on the branch: %v\n%s", files, r.stdout)
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]); got+"\n" != content {
		t.Errorf("the committed document = %q, want what the model had %s write", got, cli)
	}
	rec, ok, err := record.Parse(e.statusComment(1))
	if err != nil || !ok || rec.Usage == nil {
		t.Fatalf("no usage in the record: %v %v", ok, err)
	}
	return *rec.Usage
}
