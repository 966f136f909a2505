package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestClaudePresetThroughTheAction runs the research step through the built binary with `preset: claude`:
// the real Claude Code CLI (installed by .ci/run) talks to a scripted Anthropic model on loopback, which
// asks it to write the document at the path ralph's prompt gives; ralph's postcondition finds it, commits
// and posts it, and records the usage the model reported in the status comment.
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
	rec, ok, err := engine.ParseRecord(e.statusComment(n))
	if err != nil || !ok || rec.Usage == nil {
		t.Fatalf("no usage in the record: %v %v", ok, err)
	}
	turns := model.Turns()
	if turns != 2 || rec.Usage.Turns != turns || rec.Usage.InputTokens != turns*agenttest.InputTokens || rec.Usage.OutputTokens != turns*agenttest.OutputTokens {
		t.Errorf("recorded usage %+v; the model answered %d turns of %d in and %d out tokens", *rec.Usage, turns, agenttest.InputTokens, agenttest.OutputTokens)
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
	rec, _, _ := engine.ParseRecord(e.statusComment(1))
	if rec.Usage == nil || rec.Usage.Turns != 1 {
		t.Errorf("recorded usage = %+v, want 1 turn", rec.Usage)
	}
}

// claudeResearch runs the label run of issue 1 through the built binary with `preset: claude` and
// agent.max_turns, against a scripted model that has Claude Code write content; it skips when Claude Code
// is not installed.
func claudeResearch(t *testing.T, maxTurns int, content string) (*env, *agenttest.Anthropic, result) {
	t.Helper()
	bin := agentsBin(t, "claude")
	model := agenttest.NewAnthropic(t, "sk-ant-fake", "", content)
	e := newEnv(t, `agent:
  preset: claude
  model: claude-sonnet-4-5
  max_turns: `+strconv.Itoa(maxTurns)+`
  timeout: 3m
  env:
    ANTHROPIC_API_KEY: ""
    ANTHROPIC_BASE_URL: ""
    DISABLE_TELEMETRY: "1"
    DISABLE_AUTOUPDATER: "1"
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	p := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{env: map[string]string{
		"PATH":               bin + ":" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY":  "sk-ant-fake",
		"ANTHROPIC_BASE_URL": model.URL,
	}})
	return e, model, p.wait()
}
