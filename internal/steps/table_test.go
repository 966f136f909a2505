package steps

import (
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestTableAgreesWithTransitions: every row's moves are moves the workflow allows, so the engine can chain
// them: a step that has a lock state can enter it from where it starts and leave it by its own event.
func TestTableAgreesWithTransitions(t *testing.T) {
	for _, st := range workflowSteps() {
		if st.Do == nil || st.Agent == nil {
			t.Errorf("step %s has no function or no agent rule", st.Name)
		}
		if !st.From.Valid() {
			t.Errorf("step %s starts from %q, not a state", st.Name, st.From)
		}
		if st.Running != "" && st.Running != st.From {
			if err := testTable().Flow.Check(st.From, workflow.Start, st.Running); err != nil {
				t.Errorf("step %s cannot enter its lock state: %v", st.Name, err)
			}
			if st.Running.Kind() != workflow.Lock {
				t.Errorf("step %s runs in %s, which is not a lock state", st.Name, st.Running)
			}
		}
		where := st.From
		if st.Running != "" {
			where = st.Running
		}
		leaves := false
		for _, tr := range testTable().Flow.Transitions() {
			leaves = leaves || (tr.From == where && tr.Event == st.Name)
		}
		if !leaves {
			t.Errorf("no %s transition leaves %s", st.Name, where.Title())
		}
	}
}

// TestEveryStateHasItsStep: each waiting state, lock state and gate that ralph acts on has a step, and the
// terminal states and Human Needed have none.
func TestEveryStateHasItsStep(t *testing.T) {
	cfg := config.Default()
	want := map[workflow.State]workflow.Event{
		workflow.Backlog:            workflow.Triage,
		workflow.ResearchNeeded:     workflow.Research,
		workflow.ResearchInProgress: workflow.Research,
		workflow.ReadyForPlan:       workflow.Plan,
		workflow.PlanInProgress:     workflow.Plan,
		workflow.PlanInReview:       workflow.Review,
		workflow.InProgress:         workflow.SelfReview, // no phase left, self_review on
		workflow.InReview:           workflow.Merge,
		workflow.Done:               "",
		workflow.Canceled:           "",
		workflow.HumanNeeded:        "",
	}
	for _, s := range workflow.States() {
		ev, ok := want[s]
		if !ok {
			t.Errorf("state %s is not covered by this test", s)
			continue
		}
		var got workflow.Event
		if s != workflow.HumanNeeded && s.Kind() != workflow.Terminal {
			st, running := testTable().from(s, Record{State: s}, cfg)
			if st != nil {
				got = st.Name
			}
			if running != (s.Kind() == workflow.Lock) {
				t.Errorf("testTable().from(%s) running = %v", s, running)
			}
		}
		if got != ev {
			t.Errorf("the step from %s is %q, want %q", s.Title(), got, ev)
		}
	}
}

func TestRestartState(t *testing.T) {
	for s, want := range map[workflow.State]workflow.State{
		workflow.ResearchInProgress: workflow.ResearchNeeded,
		workflow.PlanInProgress:     workflow.ReadyForPlan,
		workflow.InProgress:         workflow.InProgress,
		workflow.PlanInReview:       workflow.PlanInReview,
		workflow.Backlog:            workflow.Backlog,
	} {
		if got := testTable().RestartState(s); got != want {
			t.Errorf("testTable().RestartState(%s) = %s, want %s", s, got, want)
		}
	}
	if testTable().Running(workflow.Research) != workflow.ResearchInProgress || testTable().Running(workflow.Merge) != "" || testTable().Running("bogus") != "" {
		t.Error("testTable().Running() disagrees with the table")
	}
}

func TestStepAgent(t *testing.T) {
	cfg := config.Default()
	for ev, want := range map[workflow.Event]bool{
		workflow.Triage: true, workflow.Research: true, workflow.Plan: true, workflow.Review: true,
		workflow.Implement: true, workflow.SelfReview: true, workflow.PR: false, workflow.Merge: false, workflow.Children: false,
	} {
		if got := testTable().Named(ev).Agent(cfg); got != want {
			t.Errorf("%s runs the agent: %v, want %v", ev, got, want)
		}
	}
	cfg.Review = config.ReviewSkip
	if testTable().Named(workflow.Review).Agent(cfg) {
		t.Error("review: skip runs the agent")
	}
	if testTable().Named("bogus") != nil {
		t.Error("stepNamed found a step that does not exist")
	}
}

// TestFixStepTakesAFixRoundsPhase: In Progress, the fix row takes the phase a fix round added after the pull
// request; implement takes the plan's phases and self-review's fix phases; with none left, self-review and
// the pull request follow, as for any phase.
func TestFixStepTakesAFixRoundsPhase(t *testing.T) {
	cfg := config.Default()
	done := Phase{Title: "one", SHA: "1111111111111111111111111111111111111111"}
	tests := []struct {
		name string
		rec  Record
		want workflow.Event
	}{
		{"a plan's phase", Record{State: workflow.InProgress, Phases: []Phase{done, {Title: "two"}}}, workflow.Implement},
		{"self-review's fix phase", Record{State: workflow.InProgress, Phases: []Phase{done, {Title: "fix", Fix: true}}}, workflow.Implement},
		{"a fix round's phase", Record{State: workflow.InProgress, PR: 2, Fix: &FixRound{Cause: FixReview},
			Phases: []Phase{done, {Title: "Address review (round 1)", Fix: true}}}, workflow.Fix},
		{"a fix round's phase done", Record{State: workflow.InProgress, PR: 2, Fix: &FixRound{Cause: FixReview},
			Phases: []Phase{done, {Title: "Address review (round 1)", Fix: true, SHA: "2222222222222222222222222222222222222222"}}}, workflow.SelfReview},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := testTable().from(workflow.InProgress, tt.rec, cfg)
			if st == nil || st.Name != tt.want {
				t.Errorf("stepFrom = %v, want %s", st, tt.want)
			}
		})
	}
}

// testTable is the workflow's table, as New builds it.
func testTable() *Table { return NewTable(workflowSteps(), Commands()) }

// TestSecurityReviewRetry: a person's retry after a closed pull request has the new pull request's branch
// security-reviewed again; a fix round's retry keeps the verdict (its pull request stays).
func TestSecurityReviewRetry(t *testing.T) {
	t.Parallel()
	st := testTable().Named(SecurityReview)
	passed := func() Record {
		return Record{PR: 2, Artifacts: map[string]Artifact{securityDocument.Kind: {Path: "p", Verdict: "PASS"}}}
	}
	rec := passed()
	st.Retry(&rec, config.Default())
	if got := rec.Artifacts[securityDocument.Kind]; got.Verdict != "" || got.Path != "p" {
		t.Errorf("after a closed pull request's retry: %+v, want the verdict forgotten", got)
	}
	rec = passed()
	rec.Fix = &FixRound{Cause: FixReview}
	st.Retry(&rec, config.Default())
	if got := rec.Artifacts[securityDocument.Kind].Verdict; got != "PASS" {
		t.Errorf("after a fix round's retry: verdict %q, want PASS kept", got)
	}
}
