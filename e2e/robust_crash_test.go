package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestRobustCrashAtEachWrite kills one run of a flow with SIGKILL at a named point between two of its writes
// (RALPH_TEST_CRASH_AT: the binary kills itself there, so the kill is injected, not hoped for), then, once
// GitHub reports that run completed, re-runs it, and lets the chain go on. Whatever the point, the flow must
// end exactly as a clean one does: the same state, the same comments of each kind with the same bodies, the
// same commits with the same files on the branch, the same pull request, no lock left, the same dispatches.
//
// The agent runs again only when the kill came before the step's commit reached the branch (after-commit:
// the commit was made in the run's own clone, which died with it); from after-push on, the rerun finds the
// commit by its Ralph-Step trailer and does not invoke the agent.
func TestRobustCrashAtEachWrite(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, "")
	ref := clean(t, cfg, nil)
	// The runs of a clean flow: 0 the label run (enroll, research), 1 plan, 2 review, 3 phase 1, 4 phase 2,
	// 5 self-review, 6 pr. Runs 0 to 5 invoke the agent once each, in that order; the pull request none.
	const research, plan, implement, selfReview, pr = 0, 1, 3, 5, 6
	cases := []struct {
		run   int
		at    string
		again bool // the agent legitimately runs again for the killed step
	}{
		{research, "after-comment", false},
		{plan, "after-commit", true},
		{plan, "after-push", false},
		{plan, "after-comment", false},
		{plan, "after-status", false},
		{plan, "after-label", false},
		{implement, "after-commit", true},
		{implement, "after-push", false},
		{implement, "after-status", false},
		{implement, "after-label", false},
		{selfReview, "after-commit", true},
		{selfReview, "after-push", false},
		{selfReview, "after-comment", false},
		{selfReview, "after-status", false},
		{selfReview, "after-label", false},
		{pr, "after-pr", false},
		{pr, "after-status", false},
		{pr, "after-label", false},
	}
	names := map[int]string{research: "research", plan: "plan", implement: "implement", selfReview: "self-review", pr: "pr"}
	for _, c := range cases {
		t.Run(names[c.run]+"/"+c.at, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cfg)
			n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
			var killedID int64
			var takeover string
			runs := e.drive(n, driveOpts{
				reruns: 3,
				opts: func(k int) runOpts {
					if k != c.run {
						return runOpts{}
					}
					return runOpts{env: map[string]string{"RALPH_TEST_CRASH_AT": c.at}}
				},
				afterRun: func(k, rerun int, r result) {
					switch {
					case k == c.run && rerun == 0:
						if r.exit != -1 || !strings.Contains(r.stdout, "ralph: stopping at "+c.at+" (RALPH_TEST_CRASH_AT)") {
							t.Fatalf("run %d was to be killed at %s; exit %d\n%s%s", k, c.at, r.exit, r.stdout, r.stderr)
						}
						killedID = r.runID
						if locks := e.lockRefs(); len(locks) != 1 {
							t.Errorf("after the kill: lock refs %v, want the killed run's", locks)
						}
					case k == c.run && rerun == 1:
						takeover = r.stdout
					}
				},
			})
			if killedID == 0 {
				t.Fatal("no run was killed")
			}
			if want := "took over a stale lock held by Actions run " + itoa(int(killedID)); !strings.Contains(takeover, want) {
				t.Errorf("the rerun did not say %q:\n%s", want, takeover)
			}
			e.wantState(n, workflow.InReview)
			got := e.snapshot(n, branch)
			if diff, dups, lost := compare(ref.snap, got); diff != "" {
				t.Errorf("the end differs from a clean run's (%d duplicates, %d lost) (-clean +got):\n%s", dups, lost, diff)
			}
			want := ref.invocations
			if c.again {
				want = withRepeat(ref.invocations, c.run)
			}
			if got := e.invocations(); !slices.Equal(got, want) {
				t.Errorf("agent invocations = %q, want %q", got, want)
			}
			// Killed before the step was recorded, the rerun redoes the step: one run more than a clean flow.
			// Killed after the record (after-status, after-label), the step is done and the rerun does the
			// next one in place of the dispatch the killed run never sent; the pull request step dispatches
			// nothing, so its rerun just finds the issue In Review and waits.
			recorded := c.at == "after-status" || c.at == "after-label"
			wantRuns, wantDispatches := ref.runs+1, ref.dispatches
			if recorded && c.run != pr {
				wantRuns, wantDispatches = ref.runs, ref.dispatches-1
			}
			if len(runs) != wantRuns {
				t.Errorf("%d runs, want %d", len(runs), wantRuns)
			}
			if got := len(e.srv.Dispatches()); got != wantDispatches {
				t.Errorf("%d dispatches, want %d", got, wantDispatches)
			}
			// The run that took over records it with the step it did; after a recorded pull request step
			// there is no step left to record (the rerun only finishes the label move and waits).
			if !recorded || c.run != pr {
				if status := e.statusComment(n); !strings.Contains(status, "after taking over a stale lock: Actions run "+itoa(int(killedID))) {
					t.Errorf("the status comment's record does not mention the takeover:\n%s", status)
				}
			}
		})
	}
}
