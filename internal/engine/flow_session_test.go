package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// scriptedSession is an agent session that runs no process, gateway or proxy: each run of the agent is
// the script's, which writes what the agent would and says how the run ended.
type scriptedSession struct {
	script func(ws *workspace.Workspace, run session.Run) error
	runs   []session.Run
	owner  [2]int // the agent's uid and gid when it is a user of its own: its files are its own
}

var _ engine.Session = (*scriptedSession)(nil)

func (s *scriptedSession) Prepare(*workspace.Workspace) {}

func (s *scriptedSession) Run(_ context.Context, ws *workspace.Workspace, run session.Run) error {
	s.runs = append(s.runs, run)
	err := s.script(ws, run)
	if s.owner[0] != 0 {
		for _, dir := range []string{ws.Dir, ws.Tmp} {
			if cerr := chownTree(dir, s.owner[0], s.owner[1]); cerr != nil {
				return cerr
			}
		}
	}
	return err
}

func (s *scriptedSession) Verify(context.Context, *workspace.Workspace, int, int) error { return nil }

func (s *scriptedSession) Scan(context.Context, *workspace.Workspace, []git.Change) error { return nil }

func (s *scriptedSession) Leaks(string) []string { return nil }

func (s *scriptedSession) Redact(text string) string { return text }

// writeArtifact writes the run's document, as the agent would.
func writeArtifact(t *testing.T, run session.Run, content string) {
	t.Helper()
	if err := os.WriteFile(run.Artifact, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResearchStepScriptedSession: the research step, on a scripted session in place of the agent's: a
// success posts the document and moves on; a budget spent before the agent ran goes to a person with the
// budget's name and what to raise; a budget reached after the agent wrote a whole document keeps it on the
// branch; a failure of the agent counts a failure and shows its output. No
// agent process runs.
func TestResearchStepScriptedSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script func(t *testing.T, run session.Run) error
		check  func(t *testing.T, h *harness, n int, res engine.Result, err error)
	}{
		{"success", func(t *testing.T, run session.Run) error {
			writeArtifact(t, run, researchDoc)
			return nil
		}, func(t *testing.T, h *harness, n int, res engine.Result, err error) {
			if err != nil || res.Step != workflow.Research || res.State != workflow.ReadyForPlan {
				t.Fatalf("Result = %+v, %v", res, err)
			}
			if cs := h.gh.commentsStarting(n, "## Research Document"); len(cs) != 1 || !strings.Contains(cs[0], "The widget lives in widget.go.") {
				t.Errorf("research comments: %q", cs)
			}
			if got := h.subjects(branchOf(n, "parse-widgets")); len(got) != 1 || got[0] != "ralph: research for #1 Parse widgets" {
				t.Errorf("commits = %q", got)
			}
		}},
		{"budget spent before", func(t *testing.T, run session.Run) error {
			return &engine.StepError{Step: run.Command, Reason: "the agent was not run", Err: &session.BudgetError{
				Limit: gateway.Limit{Name: session.BudgetDay, Cost: -1, Why: "budget.day is $1.00 a day for the repository"}, Before: true}}
		}, func(t *testing.T, h *harness, n int, res engine.Result, err error) {
			if res.Budget != "budget.day" || res.State != workflow.HumanNeeded || !res.Paused || res.Step != workflow.Research {
				t.Errorf("Result = %+v, %v", res, err)
			}
			cs := h.gh.commentsStarting(n, "### ralph: the model budget is reached, a person is needed")
			if len(cs) != 1 || !strings.Contains(cs[0], "so the agent did not run: budget.day is $1.00") || !strings.Contains(cs[0], "wait for the next UTC day, or raise `budget.day`") {
				t.Errorf("budget comments: %q", cs)
			}
			if rec := h.gh.record(t, n); rec.Before != workflow.ResearchNeeded || rec.Failures != 0 || rec.Last.Outcome != "budget reached" {
				t.Errorf("record: before %s, failures %d, last %+v", rec.Before, rec.Failures, rec.Last)
			}
		}},
		{"budget reached with the document whole", func(t *testing.T, run session.Run) error {
			writeArtifact(t, run, researchDoc)
			return &engine.StepError{Step: run.Command, Reason: "the agent was stopped", Err: &session.BudgetError{
				Limit: gateway.Limit{Name: session.BudgetStepTokens, Tokens: 500, Why: "agent.max_tokens is 500 tokens per step"},
				Spent: agent.Usage{Requests: 1, InputTokens: 400, OutputTokens: 150, CostUSD: 0.01, Metered: true}}}
		}, func(t *testing.T, h *harness, n int, res engine.Result, err error) {
			if res.Budget != "agent.max_tokens" || res.State != workflow.HumanNeeded || !res.Paused {
				t.Errorf("Result = %+v, %v", res, err)
			}
			if got := h.subjects(branchOf(n, "parse-widgets")); len(got) != 1 || got[0] != "ralph: research for #1 Parse widgets" {
				t.Errorf("commits = %q", got)
			}
			cs := h.gh.commentsStarting(n, "### ralph: the model budget is reached")
			if len(cs) != 1 || !strings.Contains(cs[0], "The document was whole") || !strings.Contains(cs[0], "raise `agent.max_tokens`") {
				t.Errorf("budget comments: %q", cs)
			}
		}},
		{"agent fails", func(t *testing.T, run session.Run) error {
			return &engine.StepError{Step: run.Command, Reason: "the agent exited with code 3",
				Err: &session.AgentFailure{Err: errors.New("exit status 3"), Tail: "boom: out of cheese", Restated: true}}
		}, func(t *testing.T, h *harness, n int, res engine.Result, err error) {
			if se := stepError(err); se == nil || se.Error() != "research failed: the agent exited with code 3" {
				t.Errorf("Advance error = %v", err)
			}
			if res.State != workflow.ResearchNeeded || !res.Continue || res.Paused {
				t.Errorf("Result = %+v", res)
			}
			cs := h.gh.commentsStarting(n, "### ralph: research failed (1 of 2)")
			if len(cs) != 1 || !strings.Contains(cs[0], "Last output") || !strings.Contains(cs[0], "out of cheese") {
				t.Errorf("failure comments: %q", cs)
			}
			if rec := h.gh.record(t, n); rec.FailedStep != workflow.Research || rec.Failures != 1 {
				t.Errorf("record: failed %q × %d", rec.FailedStep, rec.Failures)
			}
			if got := h.subjects(branchOf(n, "parse-widgets")); len(got) != 0 {
				t.Errorf("a failed step pushed %q", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			s := &scriptedSession{script: func(_ *workspace.Workspace, run session.Run) error { return tt.script(t, run) }, owner: h.agent.owner}
			var issues []int
			h.eng.NewSession = func(n int) engine.Session {
				issues = append(issues, n)
				return s
			}
			n := h.enrolled("Parse widgets")
			res, err := h.eng.Advance(context.Background(), n)
			tt.check(t, h, n, res, err)
			if len(s.runs) != 1 || s.runs[0].Command != "research" || !strings.Contains(s.runs[0].Prompt, "Parse widgets") {
				t.Errorf("session runs: %+v", s.runs)
			}
			if len(issues) == 0 || issues[0] != n {
				t.Errorf("sessions built for issues %v, want %d", issues, n)
			}
			if got := h.agent.commands(); len(got) != 0 {
				t.Errorf("the agent ran: %v", got)
			}
		})
	}
}
