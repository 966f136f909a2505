package steps

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestNext(t *testing.T) {
	def := config.Default()
	interactive := def
	interactive.Review = config.ReviewInteractive
	noSelf := def
	noSelf.SelfReview = false
	triage := def
	triage.Triage = true

	phases := func(done ...bool) []Phase {
		var ps []Phase
		for i, d := range done {
			p := Phase{Title: "phase " + string(rune('A'+i))}
			if d {
				p.SHA = "abc1234"
			}
			ps = append(ps, p)
		}
		return ps
	}
	approved := map[string]Artifact{"self-review": {Verdict: "APPROVED"}}
	sentBack := map[string]Artifact{"self-review": {Verdict: "NEEDS_ITERATION"}}

	tests := []struct {
		name     string
		rec      Record
		enrolled bool
		facts    Facts
		cfg      config.Config
		step     workflow.Event
		wait     Wait
		now      bool
		running  bool
		describe string // a part of Describe()
		short    string
	}{
		{name: "not enrolled", rec: Record{}, enrolled: false, cfg: def, describe: "not enrolled", short: "nothing"},
		{name: "enrolls into research", rec: Record{}, enrolled: true, cfg: def, step: workflow.Research, now: true, describe: "enrollment: the next run puts it in Research Needed", short: "enroll"},
		{name: "enrolls into triage", rec: Record{}, enrolled: true, cfg: triage, step: workflow.Triage, now: true, short: "enroll"},
		{name: "research", rec: Record{State: workflow.ResearchNeeded}, cfg: def, step: workflow.Research, now: true, describe: "research: gh ralph advance 7", short: "research"},
		{name: "research running", rec: Record{State: workflow.ResearchInProgress}, cfg: def, step: workflow.Research, now: true, running: true, describe: "research is running", short: "running"},
		{name: "plan", rec: Record{State: workflow.ReadyForPlan}, cfg: def, step: workflow.Plan, now: true, short: "plan"},
		{name: "review auto", rec: Record{State: workflow.PlanInReview}, cfg: def, step: workflow.Review, now: true, short: "review"},
		{name: "review interactive", rec: Record{State: workflow.PlanInReview}, cfg: interactive, step: workflow.Review, wait: WaitApproval, describe: "gh ralph approve 7", short: "a person (approve or reject)"},
		{name: "split waits for approval", rec: Record{State: workflow.Backlog, Split: &PendingSplit{Parts: 3}}, cfg: triage, step: workflow.Triage, wait: WaitSplit, describe: "split into 3 sub-issues, then gh ralph approve 7", short: "a person (approve or reject)"},
		{name: "approved split", rec: Record{State: workflow.Backlog, Split: &PendingSplit{Parts: 3, ApprovedBy: "alice"}}, cfg: triage, step: workflow.Triage, now: true, short: "triage"},
		{name: "implement", rec: Record{State: workflow.InProgress, Phases: phases(true, false)}, cfg: def, step: workflow.Implement, now: true, describe: "implement phase 2 of 2 (phase B)", short: "implement"},
		{name: "self-review when no phase is left", rec: Record{State: workflow.InProgress, Phases: phases(true, true)}, cfg: def, step: workflow.SelfReview, now: true, short: "self-review"},
		{name: "self-review again after a fix phase", rec: Record{State: workflow.InProgress, Phases: phases(true, true), Artifacts: sentBack}, cfg: def, step: workflow.SelfReview, now: true},
		{name: "fix phase before the next self-review", rec: Record{State: workflow.InProgress, Phases: phases(true, false), Artifacts: sentBack}, cfg: def, step: workflow.Implement, now: true},
		{name: "pr after an approving self-review", rec: Record{State: workflow.InProgress, Phases: phases(true, true), Artifacts: approved}, cfg: def, step: workflow.PR, now: true, short: "pr"},
		{name: "pr without self-review", rec: Record{State: workflow.InProgress, Phases: phases(true)}, cfg: noSelf, step: workflow.PR, now: true},
		{name: "in review", rec: Record{State: workflow.InReview}, cfg: def, step: workflow.Merge, wait: WaitPullRequest, describe: "people: review and merge", short: "merge the pull request"},
		// The drift this planner ended: gh ralph status said "pr" for a parent, the engine ran children.
		{name: "parent in progress", rec: Record{State: workflow.InProgress, Children: []int{8, 9}, Phases: phases(true)}, cfg: def, step: workflow.Children, wait: WaitSubIssues, describe: "its sub-issues", short: "its sub-issues"},
		{name: "parent in review", rec: Record{State: workflow.InReview, Children: []int{8}}, cfg: def, step: workflow.Children, wait: WaitSubIssues},
		{name: "human needed", rec: Record{State: workflow.HumanNeeded, Reason: "why."}, cfg: def, wait: WaitPerson, describe: "gh ralph retry 7", short: "a person (retry)"},
		{name: "done", rec: Record{State: workflow.Done}, cfg: def, wait: Finished, describe: "nothing: the issue is Done", short: "nothing"},
		{name: "canceled", rec: Record{State: workflow.Canceled}, cfg: def, wait: Finished},
		{name: "closed", rec: Record{State: workflow.ReadyForPlan}, facts: Facts{Closed: true}, cfg: def, wait: WaitReopen, describe: "closed", short: "nothing"},
		{name: "closed in review still merges", rec: Record{State: workflow.InReview}, facts: Facts{Closed: true}, cfg: def, step: workflow.Merge, wait: WaitPullRequest},
		{name: "closed and human needed", rec: Record{State: workflow.HumanNeeded}, facts: Facts{Closed: true}, cfg: def, wait: WaitReopen},
		{name: "sub-issue blocked", rec: Record{State: workflow.ResearchNeeded, Parent: 3}, facts: Facts{Blockers: []int{4, 5}}, cfg: def, step: workflow.Research, wait: WaitBlockers, describe: "#4, #5", short: "blocked"},
		{name: "sub-issue free", rec: Record{State: workflow.ResearchNeeded, Parent: 3}, facts: Facts{Blockers: []int{}}, cfg: def, step: workflow.Research, now: true},
		{name: "sub-issue after its first step", rec: Record{State: workflow.ReadyForPlan, Parent: 3, Steps: []Done{{Step: workflow.Research}}}, cfg: def, step: workflow.Plan, now: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Workflow().Next(7, tt.rec, tt.enrolled || tt.rec.State != "", tt.facts, tt.cfg)
			var got workflow.Event
			if p.Step != nil {
				got = p.Step.Name
			}
			if got != tt.step || p.Wait != tt.wait || p.Now() != tt.now || p.Running != tt.running {
				t.Errorf("Next = step %q wait %d now %v running %v; want step %q wait %d now %v running %v",
					got, p.Wait, p.Now(), p.Running, tt.step, tt.wait, tt.now, tt.running)
			}
			if tt.describe != "" && !strings.Contains(p.Describe(), tt.describe) {
				t.Errorf("Describe() = %q, want it to contain %q", p.Describe(), tt.describe)
			}
			if tt.short != "" && p.Short() != tt.short {
				t.Errorf("Short() = %q, want %q", p.Short(), tt.short)
			}
			if p.Message() == "" || p.Actions() == "" {
				t.Error("a plan with no message or no actions")
			}
		})
	}
}

// TestNextAsksForBlockers: a sub-issue about to take its first step needs what blocks it read first.
func TestNextAsksForBlockers(t *testing.T) {
	p := Workflow().Next(7, Record{State: workflow.ResearchNeeded, Parent: 3}, true, Facts{}, config.Default())
	if !p.AskBlockers || p.Takes() || p.Now() {
		t.Errorf("AskBlockers %v Runs %v Now %v; want true false false", p.AskBlockers, p.Takes(), p.Now())
	}
	if p := Workflow().Next(7, Record{State: workflow.ResearchNeeded}, true, Facts{}, config.Default()); p.AskBlockers {
		t.Error("an issue that is no sub-issue asks for blockers")
	}
}

func TestPlanMessages(t *testing.T) {
	cfg := config.Default()
	for _, tt := range []struct {
		rec    Record
		facts  Facts
		want   string
		action string
	}{
		{Record{State: workflow.HumanNeeded, Reason: "It broke.", Before: workflow.ReadyForPlan}, Facts{}, "#7 needs a person: It broke. Say `/ralph retry` when it can go on.", "go back to Ready for Plan"},
		{Record{State: workflow.Done}, Facts{}, "#7 is done", "the work is merged"},
		{Record{State: workflow.Canceled}, Facts{}, "#7 was canceled", "the issue was canceled"},
		{Record{State: workflow.Backlog}, Facts{Closed: true}, "#7 is closed; nothing to do (reopen it to go on)", "ralph takes the next step"},
		{Record{State: workflow.PlanInReview}, Facts{}, "would run review on #7 (Plan in Review)", "ralph reviews the plan next"},
		{Record{State: workflow.InReview}, Facts{}, "would run merge on #7 (In Review)", "Review and merge the pull request"},
		{Record{State: workflow.ResearchNeeded, Parent: 2}, Facts{Blockers: []int{5}}, "#7 waits: it is blocked by #5", "ralph takes the next step"},
	} {
		p := Workflow().Next(7, tt.rec, true, tt.facts, cfg)
		if got := p.Message(); got != tt.want {
			t.Errorf("%s: Message() = %q, want %q", tt.rec.State, got, tt.want)
		}
		if got := p.Actions(); !strings.Contains(got, tt.action) {
			t.Errorf("%s: Actions() = %q, want it to contain %q", tt.rec.State, got, tt.action)
		}
	}
	interactive := cfg
	interactive.Review = config.ReviewInteractive
	if got := Workflow().Next(7, Record{State: workflow.PlanInReview}, true, Facts{}, interactive).Actions(); !strings.Contains(got, "/ralph approve") {
		t.Errorf("interactive review's actions = %q", got)
	}
}

// TestReadyFollowsThePlanner: a sweep picks by labels what the planner would run now.
func TestReadyFollowsThePlanner(t *testing.T) {
	cfg := config.Default()
	interactive := cfg
	interactive.Review = config.ReviewInteractive
	for _, tt := range []struct {
		labels []string
		cfg    config.Config
		want   bool
	}{
		{[]string{workflow.LabelBuild}, cfg, true},
		{[]string{workflow.ResearchNeeded.Label()}, cfg, true},
		{[]string{workflow.ResearchInProgress.Label()}, cfg, false},
		{[]string{workflow.PlanInReview.Label()}, cfg, true},
		{[]string{workflow.PlanInReview.Label()}, interactive, false},
		{[]string{workflow.InProgress.Label()}, cfg, true},
		{[]string{workflow.InReview.Label()}, cfg, false},
		{[]string{workflow.HumanNeeded.Label()}, cfg, false},
		{[]string{workflow.Done.Label()}, cfg, false},
		{[]string{workflow.Done.Label(), workflow.Backlog.Label()}, cfg, true},
	} {
		if got := Ready(tt.labels, tt.cfg); got != tt.want {
			t.Errorf("Ready(%v) = %v, want %v", tt.labels, got, tt.want)
		}
	}
}
