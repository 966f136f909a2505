package e2e

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestClaudePresetThroughTheAction runs the research step through the built binary with `preset: claude`:
// the real Claude Code CLI (installed by .ci/run) talks, through ralph's model gateway, to a scripted
// Anthropic model on loopback, which asks it to write the document at the path ralph's prompt gives; ralph's
// postcondition finds it, commits and posts it, and records in the status comment what the gateway metered,
// which is what the model billed.
func TestClaudePresetThroughTheAction(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by Claude Code for ralph.\n"
	e, model, r := claudeResearch(t, 10, content)
	n := 1
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research with Claude Code: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	for _, p := range model.Problems() {
		t.Errorf("scripted model: %s", p)
	}
	e.wantState(n, workflow.ReadyForPlan)
	_, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 {
		t.Fatalf("no research document on the branch: %v", files)
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]); got+"\n" != content {
		t.Errorf("the committed document = %q, want what the model had Claude Code write", got)
	}
	if e.commentsStarting(n, "## Research Document") != 1 {
		t.Errorf("the document was not posted")
	}
	rec, ok, err := record.Parse(e.statusComment(n))
	if err != nil || !ok || rec.Usage == nil {
		t.Fatalf("no usage in the record: %v %v", ok, err)
	}
	turns, b, u := model.Turns(), model.Billed(), *rec.Usage
	if turns != 2 || u.Turns != turns || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens ||
		u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens || math.Abs(u.CostUSD-float64(b.Requests)*perAnswer(t)) > 1e-9 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v, at $%.6f an answer", u, turns, b, perAnswer(t))
	}
	if !strings.Contains(e.statusComment(n), "### Agent usage") {
		t.Errorf("the status comment shows no usage")
	}
	if !strings.Contains(r.stdout, "✎") {
		t.Errorf("the log does not show the file edit as progress:\n%s", r.stdout)
	}
}

// TestClaudePresetTurnLimit: Claude Code stops at agent.max_turns (1: the turn in which it wrote the
// document), exiting non-zero; ralph keeps what it produced because the step's postcondition holds, and
// says the limit was hit.
func TestClaudePresetTurnLimit(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nOne turn was enough to write this.\n"
	e, model, r := claudeResearch(t, 1, content)
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research at the turn limit: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if model.Turns() != 1 {
		t.Errorf("the model answered %d turns, want 1 (the limit)", model.Turns())
	}
	e.wantState(1, workflow.ReadyForPlan)
	_, files := e.branch(branch)
	if docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`); len(docs) != 1 {
		t.Fatalf("the document written before the limit was not kept: %v", files)
	}
	if !strings.Contains(r.stdout, "turn limit") {
		t.Errorf("the log does not say the turn limit was hit:\n%s", r.stdout)
	}
	rec, _, _ := record.Parse(e.statusComment(1))
	if rec.Usage == nil || rec.Usage.Turns != 1 {
		t.Errorf("recorded usage = %+v, want 1 turn", rec.Usage)
	}
}

// TestClaudePresetBudget: at agent.max_cost ralph's gateway refuses Claude Code's second request; Claude
// Code shows ralph's reason and stops; the document it wrote in the first turn is kept, and the issue goes
// to a person with the figures.
func TestClaudePresetBudget(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten before the budget was reached.\n"
	e, model, r := claudeResearch(t, 10, content, "  max_cost: "+ftoa(perAnswer(t)/2)+"\n")
	if r.exit != 0 || r.outputs["state"] != "human-needed" {
		t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if model.Turns() != 1 || model.Billed().Requests != 1 {
		t.Errorf("the model answered %d turns (%d requests), want 1", model.Turns(), model.Billed().Requests)
	}
	if !strings.Contains(r.stdout, "API Error: 400 ralph: budget reached, no more model requests in this step: agent.max_cost is $") {
		t.Errorf("Claude Code does not show ralph's reason:\n%s", r.stdout)
	}
	_, files := e.branch(branch)
	docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
	if len(docs) != 1 || e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0])+"\n" != content {
		t.Fatalf("the document written before the budget was not kept: %v", files)
	}
	if rec := e.record(1); !strings.Contains(rec.Reason, "raise `agent.max_cost`") || rec.Usage == nil || rec.Usage.Requests != 1 {
		t.Errorf("the record: %s, %+v", rec.Reason, rec.Usage)
	}
}

// claudeResearch runs the label run of issue 1 through the built binary with `preset: claude`,
// agent.max_turns and more of the agent section, against a scripted model, behind ralph's gateway, that has
// Claude Code write content; ralph holds the model key, which the model checks. It skips when Claude Code
// is not installed.
func claudeResearch(t *testing.T, maxTurns int, content string, agentExtra ...string) (*env, *agenttest.Anthropic, result) {
	t.Helper()
	bin := agentsBin(t, "claude")
	model := agenttest.NewAnthropic(t, modelKey, "", content)
	e := newEnv(t, `agent:
  preset: claude
  model: claude-sonnet-4-5
  max_turns: `+strconv.Itoa(maxTurns)+`
  timeout: 3m
`+strings.Join(agentExtra, "")+`  env:
    DISABLE_TELEMETRY: "1"
    DISABLE_AUTOUPDATER: "1"
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
gateway:
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
