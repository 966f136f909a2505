package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// refuseOutcomes makes GitHub answer code to every edit of a status comment whose record holds
// no attempt (the edit that records an outcome), from the call on which on is true.
func refuseOutcomes(h *harness, code int) (on func()) {
	var mu sync.Mutex
	armed := false
	h.gh.refuseComments(func(body string) int {
		mu.Lock()
		defer mu.Unlock()
		if !armed || !strings.HasPrefix(body, record.StatusMarker) {
			return 0
		}
		if rec, ok, err := record.Parse(body); err == nil && ok && rec.Attempt == nil && rec.State != workflow.HumanNeeded {
			return code
		}
		return 0
	})
	return func() { mu.Lock(); armed = true; mu.Unlock() }
}

// TestFlowWriteAheadBoundsAgentRuns: whatever GitHub answers to the edit that records a step's outcome,
// the agent runs at most max_failures times for the step: the attempt is counted before it starts.
func TestFlowWriteAheadBoundsAgentRuns(t *testing.T) {
	t.Parallel()
	for _, code := range []int{502, 422} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *config.Config) { c.MaxFailures = 2; c.Agent.MaxCost = 0.5 })
			n := h.enrolled("Parse widgets")
			refuseOutcomes(h, code)()
			h.agent.on("research", exits(3, "boom"))
			for range 6 {
				_, _ = h.eng.Advance(context.Background(), n)
			}
			runs := 0
			for _, c := range h.agent.commands() {
				if c == "research" {
					runs++
				}
			}
			want := 2
			if code == 422 {
				want = 1 // GitHub refuses the record for good: the first run asks for a person
			}
			if runs != want {
				t.Errorf("the research agent ran %d times over 6 runs, want %d (max_failures 2)", runs, want)
			}
			rec := h.gh.record(t, n)
			if rec.FailedStep != workflow.Research || rec.Failures < runs {
				t.Errorf("record: failed step %q, failures %d; want research, at least %d", rec.FailedStep, rec.Failures, runs)
			}
			if code == 422 {
				h.wantState(n, workflow.HumanNeeded)
				if rec.State != workflow.HumanNeeded || !strings.Contains(rec.Reason, "could not record the outcome") {
					t.Errorf("record: state %s, reason %q", rec.State, rec.Reason)
				}
				if got := len(h.gh.commentsStarting(n, "### ralph: the outcome of research could not be recorded")); got != 1 {
					t.Errorf("%d comments asking for a person, want 1", got)
				}
			}
		})
	}
}

// TestFlowWriteAheadReservesBudget: the step's budget reservation is recorded before the agent starts,
// and a run whose outcome was never recorded counts it as spent.
func TestFlowWriteAheadReservesBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.MaxFailures = 3; c.Agent.MaxCost = 0.5 })
	n := h.enrolled("Parse widgets")
	refuseOutcomes(h, 502)()
	h.agent.on("research", exits(3, "boom"))
	_, _ = h.eng.Advance(context.Background(), n)
	rec := h.gh.record(t, n)
	if rec.Attempt == nil || rec.Attempt.Step != workflow.Research || rec.Attempt.Reserved != 0.5 || rec.Failures != 1 {
		t.Fatalf("record after a run whose outcome GitHub refused: attempt %+v, failures %d", rec.Attempt, rec.Failures)
	}
	if body := h.gh.statusBody(n); !strings.Contains(body, "attempt 1 of 3 in a row; counted as a failure") {
		t.Errorf("the status comment does not say the attempt is counted:\n%s", body)
	}
	_, _ = h.eng.Advance(context.Background(), n)
	rec = h.gh.record(t, n)
	if rec.Usage == nil || rec.Usage.CostUSD < 0.5 || rec.Failures != 2 {
		t.Errorf("the next run's record: usage %+v, failures %d; want the first attempt's $0.50 spent, 2 failures", rec.Usage, rec.Failures)
	}
}

// TestFlowWriteAheadRefusedNoAgent: when GitHub does not take the attempt's record, no agent runs.
func TestFlowWriteAheadRefusedNoAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.gh.refuseComments(func(body string) int {
		if rec, ok, err := record.Parse(body); err == nil && ok && rec.Attempt != nil {
			return 422
		}
		return 0
	})
	for range 3 {
		if _, err := h.eng.Advance(context.Background(), n); err == nil || !strings.Contains(err.Error(), "the agent did not run") {
			t.Errorf("Advance error = %v, want the attempt's record refused", err)
		}
	}
	if got := h.agent.commands(); len(got) != 0 {
		t.Errorf("the agent ran: %v", got)
	}
}

// TestFlowUnrecordedLabelHolds: when GitHub takes no record after the attempt's, the label and one comment
// ask for a person, and later runs do not start the agent.
func TestFlowUnrecordedLabelHolds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.MaxFailures = 5 })
	n := h.enrolled("Parse widgets")
	h.gh.refuseComments(func(body string) int {
		if rec, ok, err := record.Parse(body); err == nil && ok && rec.Attempt != nil && rec.State == workflow.ResearchNeeded {
			return 0
		}
		if strings.HasPrefix(body, record.StatusMarker) {
			return 422
		}
		return 0
	})
	for range 4 {
		_, _ = h.eng.Advance(context.Background(), n)
	}
	if got := h.agent.commands(); !slices.Equal(got, []string{"research"}) {
		t.Errorf("agent runs = %v, want one research", got)
	}
	// The record cannot say it: the label does, and the record's unrecorded attempt keeps it.
	if got := h.gh.stateLabels(n); !slices.Equal(got, []workflow.State{workflow.HumanNeeded}) {
		t.Errorf("state labels = %v, want Human Needed", got)
	}
	if got := len(h.gh.commentsStarting(n, "### ralph: the outcome of research could not be recorded")); got != 1 {
		t.Errorf("%d comments asking for a person, want 1", got)
	}
}

// TestHostileLongSelfReview: an agent's self-review of 80 KB that does not approve leaves a record GitHub
// takes (its findings stay in the document on the branch, which the fix phase reads), and the comment
// that posts it is cut to GitHub's limit.
func TestHostileLongSelfReview(t *testing.T) {
	t.Parallel()
	h, n := phasesDone(t, 3)
	finding := "parse.go leaks a file <here> & there. "
	doc := "# Self-review\n\n" + strings.Repeat(finding, 80000/len(finding)) + "\n\nVERDICT: NEEDS_ITERATION\n"
	h.agent.set("self-review", writes(doc), writes(approved))
	res := h.advance(n)
	if res.Step != selfReviewEvent || res.State != workflow.InProgress {
		t.Fatalf("self-review Result = %+v", res)
	}
	rec := h.gh.record(t, n)
	if len(rec.Phases) != 3 || len(rec.Phases[2].Text) > 1000 || rec.Phases[2].Doc != selfReviewPath {
		t.Fatalf("fix phase: %d phases, text of %d bytes, doc %q", len(rec.Phases), len(rec.Phases[len(rec.Phases)-1].Text), rec.Phases[len(rec.Phases)-1].Doc)
	}
	if got := len(h.gh.commentsStarting(n, "## Self-Review")); got != 1 {
		t.Errorf("self-review comments: %d", got)
	}
	h.advance(n)
	if inv := h.agent.last(); inv.Command != "implement" || strings.Count(inv.Prompt, finding) < 2000 {
		t.Errorf("the fix phase's prompt does not hold the self-review's findings (command %s)", inv.Command)
	}
}

// TestHostileManyRefusedPaths: an agent that adds 400 long-named files under .github/workflows fails its
// phase, and the failure is recorded and counted (the list of refused paths is cut with a count).
func TestHostileManyRefusedPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.to(n, workflow.InProgress, 4)
	h.agent.on("implement", func(a *agentRun) (agentResult, error) {
		for i := range 400 {
			a.file(fmt.Sprintf(".github/workflows/%03d-%s.yml", i, strings.Repeat("w", 200)), "on: push\n")
		}
		return ok()
	})
	_, err := h.eng.Advance(context.Background(), n)
	if se := stepError(err); se == nil || !strings.Contains(se.Reason, "protected_paths") {
		t.Fatalf("Advance error = %v, want the protected paths refused", err)
	}
	rec := h.gh.record(t, n)
	if rec.FailedStep != workflow.Implement || rec.Failures != 1 || rec.Attempt != nil {
		t.Errorf("record: failed step %q, failures %d, attempt %v; want the failure recorded", rec.FailedStep, rec.Failures, rec.Attempt)
	}
	if got := len(h.gh.commentsStarting(n, "### ralph: implement failed (1 of")); got != 1 {
		t.Errorf("%d failure comments, want 1", got)
	}
}
