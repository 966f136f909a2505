package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

var settleAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestSettle: a completed step (or a person's command) and the record it started from make the new record
// and the writes, and nothing else.
func TestSettle(t *testing.T) {
	base := Record{State: workflow.PlanInProgress, Branch: "ralph/7-x", Runs: 3, FailedStep: workflow.Plan, Failures: 1}
	draft := base.Clone()
	draft.Phases = []Phase{{Title: "one"}}
	tests := []struct {
		name string
		in   settling
		// want is checked on the fields it names.
		to         workflow.State
		msg        string
		labels     []labelChange
		notices    []string // keys
		steps      int      // entries of the checklist
		failures   int
		before     workflow.State
		phases     int
		wantErrSub string
	}{
		{
			name: "a step moves the issue and counts for the checklist; its failures are forgotten",
			in: settling{Step: workflow.Plan, Row: testTable().Named(workflow.Plan), From: workflow.ReadyForPlan, State: workflow.PlanInProgress,
				Out: Outcome{To: workflow.PlanInReview, Record: &draft, Labels: map[string]bool{"z": true, "a": false}}},
			to: workflow.PlanInReview, msg: "plan: Ready for Plan → Plan in Review",
			labels: []labelChange{{"a", false}, {"z", true}}, steps: 1, phases: 1,
		},
		{
			name: "a step that stays says so",
			in:   settling{Step: workflow.Plan, From: workflow.PlanInProgress, State: workflow.PlanInProgress},
			to:   workflow.PlanInProgress, msg: "plan done; still Plan in Progress", steps: 1,
		},
		{
			name: "an escalation goes to a person with a notice keyed by the run, and no checklist entry",
			in: settling{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress,
				Out: Outcome{Person: &Escalation{Before: workflow.ReadyForPlan, Reason: "why", Advice: "do"}}},
			to: workflow.HumanNeeded, msg: "plan: Ready for Plan → Human Needed", notices: []string{"human 3"},
			failures: 1, before: workflow.ReadyForPlan,
		},
		{
			name: "a person's command is no step of the checklist",
			in:   settling{Step: workflow.Event(ActRetry), From: workflow.HumanNeeded, State: workflow.HumanNeeded, By: "alice", Out: Outcome{To: workflow.ReadyForPlan}},
			to:   workflow.ReadyForPlan, msg: "@alice: retry (Human Needed → Ready for Plan)", failures: 1,
		},
		{
			name: "a takeover is said",
			in:   settling{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Out: Outcome{To: workflow.PlanInReview}, Takeover: "run 9"},
			to:   workflow.PlanInReview, msg: "plan: Ready for Plan → Plan in Review (after taking over a stale lock: run 9)", steps: 1,
		},
		{
			name:       "a move the workflow does not have is refused",
			in:         settling{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Out: Outcome{To: workflow.Done}},
			wantErrSub: "plan",
		},
		{
			// The workflow lets triage end in Done; this declaration does not: the declaration is what holds.
			name: "a move outside the step's declared set is refused, even where the workflow has it",
			in: settling{Step: workflow.Triage, Row: &Step{Name: workflow.Triage, From: workflow.Backlog, To: []workflow.State{workflow.ResearchNeeded}},
				From: workflow.Backlog, State: workflow.Backlog, Out: Outcome{To: workflow.Done}},
			wantErrSub: `"triage" cannot move an issue from Backlog to Done`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.At, tt.in.URL = settleAt, "https://run"
			before := base.Clone()
			got, err := settle(testTable(), base, tt.in)
			if diff := cmp.Diff(before, base); diff != "" {
				t.Fatalf("settle changed the record it was given (-before +after):\n%s", diff)
			}
			if tt.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSub) {
					t.Fatalf("err = %v, want one about %q", err, tt.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, n := range got.Notices {
				keys = append(keys, n.Key)
			}
			type view struct {
				To, State, Before     workflow.State
				Msg, LastMsg          string
				Labels                []labelChange
				Notices               []string
				Steps, Failures, Runs int
				Phases                int
				At                    time.Time
			}
			gotV := view{got.To, got.Record.State, got.Record.Before, got.Message, got.Record.Last.Message, got.Labels, keys,
				len(got.Record.Steps), got.Record.Failures, got.Record.Runs, len(got.Record.Phases), got.Record.Last.At}
			wantV := view{tt.to, tt.to, tt.before, tt.msg, tt.msg, tt.labels, tt.notices, tt.steps, tt.failures, 4, tt.phases, settleAt}
			if diff := cmp.Diff(gotV, wantV); diff != "" {
				t.Errorf("settled (-got +want):\n%s", diff)
			}
		})
	}
}

// TestSettleFailure: a failed step is settled from the record the run read, whatever the step had drafted.
func TestSettleFailure(t *testing.T) {
	base := Record{State: workflow.PlanInProgress, Branch: "ralph/7-x", Runs: 5}
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cret", "***") }
	serr := &StepError{Step: "plan", Reason: "the agent exited with code 1 (s3cret)"}
	tests := []struct {
		name        string
		rec         Record
		f           failing
		to          workflow.State
		outcome     string
		failures    int
		notices     []string
		paused      bool
		cont        bool
		budget      string
		noticeHolds string
	}{
		{
			name: "a first failure is counted; the issue goes back to where the step started",
			rec:  base, f: failing{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Err: serr, MaxFailures: 3},
			to: workflow.ReadyForPlan, outcome: "failed", failures: 1, notices: []string{"failed plan 5"}, cont: true, noticeHolds: "(1 of 3)",
		},
		{
			name: "the last failure allowed goes to a person",
			rec:  Record{State: workflow.PlanInProgress, Branch: "ralph/7-x", Runs: 5, FailedStep: workflow.Plan, Failures: 2},
			f:    failing{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Err: serr, MaxFailures: 3},
			to:   workflow.HumanNeeded, outcome: "failed", failures: 3, notices: []string{"failed plan 5"}, paused: true, noticeHolds: "failed 3 times in a row",
		},
		{
			name: "another step's failure starts a new count",
			rec:  Record{State: workflow.PlanInProgress, Runs: 5, FailedStep: workflow.Research, Failures: 2},
			f:    failing{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Err: serr, MaxFailures: 3},
			to:   workflow.ReadyForPlan, outcome: "failed", failures: 1, notices: []string{"failed plan 5"}, cont: true,
		},
		{
			name: "an interrupted run is recorded, not counted",
			rec:  base, f: failing{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, Err: serr, MaxFailures: 3, Interrupted: errors.New("cancelled")},
			to: workflow.ReadyForPlan, outcome: "interrupted",
		},
		{
			name: "a budget reached goes to a person at once, counting nothing",
			rec:  base,
			f: failing{Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInProgress, MaxFailures: 3,
				Err: &StepError{Step: "plan", Reason: "the agent was stopped", Err: &session.BudgetError{Limit: gateway.Limit{Name: session.BudgetIssue, Why: "spent"}, Before: true}}},
			to: workflow.HumanNeeded, outcome: "budget reached", notices: []string{"budget plan 5"}, paused: true, budget: session.BudgetIssue,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.Issue, tt.f.At, tt.f.Redact = 7, settleAt, redact
			got, err := settleFailure(testTable(), tt.rec, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, n := range got.Notices {
				keys = append(keys, n.Key)
				if strings.Contains(n.Body, "s3cret") {
					t.Errorf("notice %q holds the secret:\n%s", n.Key, n.Body)
				}
				if !strings.Contains(n.Body, tt.noticeHolds) {
					t.Errorf("notice %q does not say %q:\n%s", n.Key, tt.noticeHolds, n.Body)
				}
			}
			type view struct {
				To, State        workflow.State
				Outcome          string
				Failures, Runs   int
				Notices          []string
				Paused, Continue bool
				Budget           string
			}
			gotV := view{got.To, got.Record.State, got.Record.Last.Outcome, got.Record.Failures, got.Record.Runs, keys, got.Paused, got.Continue, got.Budget}
			wantV := view{tt.to, tt.to, tt.outcome, tt.failures, tt.rec.Runs + 1, tt.notices, tt.paused, tt.cont, tt.budget}
			if diff := cmp.Diff(gotV, wantV); diff != "" {
				t.Errorf("settled (-got +want):\n%s", diff)
			}
			if strings.Contains(got.Record.Last.Message, "s3cret") {
				t.Errorf("the record's last run holds the secret: %q", got.Record.Last.Message)
			}
		})
	}
}

// testTable is the workflow's table, built from the steps' declarations.
func testTable() *table { return workflowTable() }
