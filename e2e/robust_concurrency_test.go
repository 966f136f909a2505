package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestRobustConcurrentRuns starts 8 runs of the Action for the same issue at the same moment, with an agent
// that takes 1.5 s, and repeats that round after round while the issue advances one step per round (research,
// plan, review, 4 phases — 16 under RALPH_E2E_SOAK=1, which .ci/run sets —, self-review, the pull request). In every round exactly one run does the step (one agent
// invocation, one commit, one step recorded) and the 7 others exit 0 naming the run that holds the issue.
func TestRobustConcurrentRuns(t *testing.T) {
	t.Parallel()
	const runners = 8
	phases := 4
	if soak() {
		phases = 16
	}
	e := newEnv(t, baseConfig(t, ""))
	e.setControl("phases", itoa(phases))
	e.setControl("sleep", "1.5")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	base := len(strings.Split(e.git(e.srv.BareRepo, "log", "--format=%s", "main"), "\n"))

	type round struct{ step, state, invocation, head string }
	rounds := []round{
		{"research", "ready-for-plan", "research 1", "ralph: research for #1 Add a greeting"},
		{"plan", "plan-in-review", "plan 1", "ralph: plan for #1 Add a greeting"},
		{"review", "in-progress", "review 1", "ralph: plan review for #1 Add a greeting"},
	}
	for k := 1; k <= phases; k++ {
		rounds = append(rounds, round{"implement", "in-progress", fmt.Sprintf("implement 1 %d %d", k, phases), fmt.Sprintf("ralph: Phase %d of %d: #1 Step %d", k, phases, k)})
	}
	rounds = append(rounds, round{"self-review", "in-progress", "self-review 1", "ralph: self-review for #1 Add a greeting"},
		round{"pr", "in-review", "", ""}) // the pull request runs no agent and commits nothing

	heldBy := regexp.MustCompile(`#1 is held by Actions run (\d+)`)
	batch := func() []*pending {
		ps := make([]*pending, runners)
		for j := range ps {
			ps[j] = e.prepare("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true})
		}
		return ps
	}
	next := batch()
	agentRuns, commits := 0, 0
	for i, want := range rounds {
		ps := next
		for _, p := range ps {
			p.launch()
		}
		// The next round's checkouts are made while this one runs (the step reads the issue's branch from
		// origin, not from the checkout).
		if i+1 < len(rounds) {
			next = batch()
		}
		var winners []result
		held := 0
		holders := map[string]bool{} // runs that held the issue besides the winner
		for _, p := range ps {
			r := p.wait()
			if r.exit != 0 {
				t.Fatalf("round %d: run %d exit %d\n%s%s", i+1, r.runID, r.exit, r.stdout, r.stderr)
			}
			// A run that found the lock moving under it (taken, released and taken again while it looked)
			// is held too, by a run it cannot name; like every held run it does nothing.
			if m := heldBy.FindStringSubmatch(r.stdout); m != nil || strings.Contains(r.stdout, "#1 is held by another run (the lock changed hands while ralph looked)") {
				held++
				if r.outputs["step"] != "" {
					t.Errorf("round %d: run %d was held but did %s", i+1, r.runID, r.outputs["step"])
				}
				continue
			}
			if want.step == "pr" && r.outputs["step"] == "merge" && r.outputs["state"] == "in-review" {
				// The pull request step runs no agent and is over quickly: a run that locks the issue after it
				// finds it In Review, and its merge step finds the pull request open and waits.
				held++
				holders[itoa(int(r.runID))] = true
				continue
			}
			winners = append(winners, r)
		}
		if len(winners) != 1 || held != runners-1 {
			for _, w := range winners {
				t.Logf("run %d did %q and left %q", w.runID, w.outputs["step"], w.outputs["state"])
			}
			t.Fatalf("round %d: %d runs did a step and %d were held (or found it waiting), want 1 and %d", i+1, len(winners), held, runners-1)
		}
		w := winners[0]
		// The held runs name the winner.
		for _, p := range ps {
			if m := heldBy.FindStringSubmatch(p.stdout.String()); m != nil && m[1] != itoa(int(w.runID)) && !holders[m[1]] {
				t.Errorf("round %d: run %d says the issue is held by run %s; run %d held it", i+1, p.runID, m[1], w.runID)
			}
		}
		if w.outputs["step"] != want.step || w.outputs["state"] != want.state {
			t.Fatalf("round %d: the step run did %q and left %q, want %q and %q\n%s", i+1, w.outputs["step"], w.outputs["state"], want.step, want.state, w.stdout)
		}
		e.invariants(n)
		e.wantState(n, workflow.State(want.state))
		if want.invocation != "" {
			agentRuns++
		}
		if inv := e.invocations(); len(inv) != agentRuns || (want.invocation != "" && inv[agentRuns-1] != want.invocation) {
			t.Fatalf("round %d: agent invocations %q, want %d ending with %q", i+1, inv, agentRuns, want.invocation)
		}
		wantHead := want.head
		if wantHead != "" {
			commits++
		} else {
			wantHead = rounds[i-1].head
		}
		subjects, _ := e.branch(branch)
		if len(subjects) != base+commits || subjects[0] != wantHead {
			t.Fatalf("round %d: %d commits on the branch, head %q; want %d, head %q", i+1, len(subjects), subjects[0], base+commits, wantHead)
		}
		if rec := e.record(n); len(rec.Steps) != i+1 {
			t.Fatalf("round %d: %d steps recorded, want %d", i+1, len(rec.Steps), i+1)
		}
		if locks := e.lockRefs(); len(locks) != 0 {
			t.Fatalf("round %d: lock refs left: %v", i+1, locks)
		}
	}

	// At the end: one status comment, each artifact comment once, one commit per step, one pull request, no
	// lock, and one dispatch per step that left a step to do.
	e.wantState(n, workflow.InReview)
	kinds := map[string]int{}
	for _, c := range e.srv.Comments(n) {
		kinds[commentKind(c.Body)]++
	}
	wantKinds := map[string]int{"status": 1, "## Research Document": 1, "## Implementation Plan": 1, "## Plan Review": 1, "## Self-Review": 1}
	if fmt.Sprint(kinds) != fmt.Sprint(wantKinds) {
		t.Errorf("comments by kind = %v, want %v", kinds, wantKinds)
	}
	subjects, _ := e.branch(branch)
	var wantSubjects []string
	for i := len(rounds) - 1; i >= 0; i-- {
		if rounds[i].head != "" {
			wantSubjects = append(wantSubjects, rounds[i].head)
		}
	}
	if !slices.Equal(subjects[:len(wantSubjects)], wantSubjects) {
		t.Errorf("branch commits = %q, want %q", subjects, wantSubjects)
	}
	if pulls := e.srv.Pulls(); len(pulls) != 1 {
		t.Errorf("%d pull requests, want 1", len(pulls))
	}
	if got := len(e.srv.Dispatches()); got != len(rounds)-1 {
		t.Errorf("%d dispatches, want %d (one per step but the last)", got, len(rounds)-1)
	}
	if locks := e.lockRefs(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
}
