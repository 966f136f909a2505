package e2e

import (
	"os"
	"path/filepath"
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
	bin := os.Getenv("RALPH_AGENTS_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", ".cache", "agents", "node_modules", ".bin"))
	}
	if _, err := os.Stat(filepath.Join(bin, "claude")); err != nil {
		t.Skipf("Claude Code is not installed in %s: run .ci/run (its \"== agent CLIs\" step installs it) or set RALPH_AGENTS_BIN", bin)
	}
	const content = "# Research: greeting\n\nWritten by Claude Code for ralph.\n"
	model := agenttest.NewAnthropic(t, "sk-ant-fake", "", content)
	e := newEnv(t, `agent:
  preset: claude
  model: claude-sonnet-4-5
  max_turns: 10
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
	r := p.wait()
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
