package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// killMidPlan runs the label run (enrollment and research), then starts the plan run with an agent that
// works for `work`, and kills the run (and its agent's processes, as a dying runner takes them along) with
// SIGKILL while the agent works. It checks what the killed run left: the issue in its lock state and the
// lock held, with nothing of the plan step recorded.
func killMidPlan(t *testing.T, e *env, n int, o runOpts, work string) result {
	t.Helper()
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{track: true}).wait(); r.exit != 0 {
		t.Fatalf("label run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.setControl("sleep", work)
	o.track = true
	p := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n)}), nil, o)
	e.waitInvocations(2)
	p.kill()
	e.killAgent()
	killed := p.wait()
	if err := removeControl(e, "sleep"); err != nil {
		t.Fatal(err)
	}
	if killed.exit != -1 {
		t.Fatalf("the plan run was not killed: exit %d\n%s%s", killed.exit, killed.stdout, killed.stderr)
	}
	e.wantState(n, workflow.PlanInProgress)
	if rec := e.record(n); rec.State != workflow.ReadyForPlan || len(rec.Steps) != 1 {
		t.Errorf("after the kill the record says %s with %d steps done, want Ready for Plan and 1 (research)", rec.State, len(rec.Steps))
	}
	if locks := e.lockRefs(); !slices.Equal(locks, []string{"refs/ralph/locks/1"}) {
		t.Fatalf("after the kill: lock refs %v, want the killed run's", locks)
	}
	return killed
}

// lockHolder reads who holds issue n's lock, from the lock commit on the server.
func (e *env) lockHolder(n int) lock.Holder {
	e.t.Helper()
	h, err := lock.ParseHolder(e.git(e.srv.BareRepo, "log", "-1", "--format=%B", "refs/"+lock.RefName(n)))
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// finishAfterTakeover checks the end of a flow whose plan run was killed mid-agent and taken over: the same
// end as a clean run, the plan agent run twice (the killed run never committed its plan) and nothing else
// twice, and the takeover in the status comment's record.
func finishAfterTakeover(t *testing.T, e *env, n int, ref cleanRun, killed result) {
	t.Helper()
	e.wantState(n, workflow.InReview)
	if diff, dups, lost := compare(ref.snap, e.snapshot(n, branch)); diff != "" {
		t.Errorf("the end differs from a clean run's (%d duplicates, %d lost) (-clean +got):\n%s", dups, lost, diff)
	}
	if got, want := e.invocations(), withRepeat(ref.invocations, 1); !slices.Equal(got, want) {
		t.Errorf("agent invocations = %q, want %q (the plan twice: the killed run's and the takeover's)", got, want)
	}
	if got := len(e.srv.Dispatches()); got != ref.dispatches {
		t.Errorf("%d dispatches, want %d as in a clean run", got, ref.dispatches)
	}
	var took []string
	for _, r := range e.record(n).History {
		if strings.Contains(r.Message, "after taking over a stale lock: Actions run "+itoa(int(killed.runID))) {
			took = append(took, string(r.Step))
		}
	}
	if !slices.Equal(took, []string{"plan"}) {
		t.Errorf("steps recorded as done after a takeover: %q, want the plan", took)
	}
}

// TestRobustKillMidAgent kills a run with SIGKILL while its agent works. The killed run's lock stays; the
// next runs see it and exit 0 naming the holder, until the holder is known to be gone: its Actions run is
// completed, a new attempt of the same run starts, or its lease (no longer renewed) expires. Then a run
// takes the lock over, redoes the step from its start state, and the flow ends exactly as a clean one does.
func TestRobustKillMidAgent(t *testing.T) {
	t.Parallel()

	t.Run("holder run completed", func(t *testing.T) {
		t.Parallel()
		cfg := baseConfig(t, "")
		ref := clean(t, cfg, nil)
		e := newEnv(t, cfg)
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		killed := killMidPlan(t, e, n, runOpts{}, "30")
		statusBefore := e.statusComment(n)

		// GitHub still shows the killed run in progress: the lock holds.
		held := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true}).wait()
		if want := "#1 is held by Actions run " + itoa(int(killed.runID)); held.exit != 0 || !strings.Contains(held.stdout, want) {
			t.Fatalf("the run after the kill: exit %d, want 0 and %q\n%s%s", held.exit, want, held.stdout, held.stderr)
		}
		if len(e.invocations()) != 2 || len(e.srv.Dispatches()) != 1 || e.statusComment(n) != statusBefore {
			t.Errorf("the held run did something: %d invocations, %d dispatches", len(e.invocations()), len(e.srv.Dispatches()))
		}
		e.wantState(n, workflow.PlanInProgress)

		// The run is reported completed: the next run takes the lock over and redoes the plan.
		e.srv.SetWorkflowRun(killed.runID, "completed", "cancelled")
		seen := len(e.srv.Dispatches())
		r := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true}).wait()
		if r.exit != 0 || r.outputs["step"] != "plan" || r.outputs["state"] != "plan-in-review" {
			t.Fatalf("the takeover run: exit %d, outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
		}
		want := "took over a stale lock held by Actions run " + itoa(int(killed.runID))
		if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "its Actions run has completed (cancelled)") {
			t.Errorf("the takeover run does not say %q and why:\n%s", want, r.stdout)
		}
		if status := e.statusComment(n); !strings.Contains(status, "after taking over a stale lock: Actions run "+itoa(int(killed.runID))) {
			t.Errorf("the status comment does not mention the takeover:\n%s", status)
		}
		e.follow(n, nil, seen, driveOpts{reruns: 3})
		finishAfterTakeover(t, e, n, ref, killed)
	})

	t.Run("re-run attempt", func(t *testing.T) {
		t.Parallel()
		cfg := baseConfig(t, "")
		ref := clean(t, cfg, nil)
		e := newEnv(t, cfg)
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		killed := killMidPlan(t, e, n, runOpts{runID: 4242}, "30")
		// GitHub's "Re-run jobs": the same run id, the next attempt; it need not wait for the run to be
		// reported completed.
		seen := len(e.srv.Dispatches())
		r := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{runID: 4242, attempt: 2, track: true}).wait()
		if r.exit != 0 || r.outputs["step"] != "plan" {
			t.Fatalf("attempt 2: exit %d, outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
		}
		if want := "attempt 2 of this run replaced attempt 1"; !strings.Contains(r.stdout, want) {
			t.Errorf("attempt 2 does not say %q:\n%s", want, r.stdout)
		}
		e.follow(n, nil, seen, driveOpts{reruns: 3})
		finishAfterTakeover(t, e, n, ref, killed)
	})

	t.Run("lease expired", func(t *testing.T) {
		t.Parallel()
		// A 3 s lease, renewed every second. The killed holder's run is never reported completed: only
		// the lease can free the issue.
		cfg := baseConfig(t, "lock_lease: 3s\n")
		ref := clean(t, cfg, nil)
		e := newEnv(t, cfg)
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
		if r := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{track: true}).wait(); r.exit != 0 {
			t.Fatalf("label run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
		}
		e.setControl("sleep", "30")
		p := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true})
		e.waitInvocations(2)
		acquired := e.lockHolder(n)
		// Longer than the lease: only renewal keeps the live holder's lock.
		time.Sleep(3500 * time.Millisecond)
		held := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true}).wait()
		if want := "#1 is held by Actions run " + itoa(int(p.runID)); held.exit != 0 || !strings.Contains(held.stdout, want) {
			t.Fatalf("a run while the holder works past its first lease: exit %d, want 0 and %q\n%s%s", held.exit, want, held.stdout, held.stderr)
		}
		if renewed := e.lockHolder(n); !renewed.Expires.After(acquired.Expires) {
			t.Errorf("the lease was not renewed: expires %s, as at acquisition", renewed.Expires)
		}
		p.kill()
		e.killAgent()
		killed := p.wait()
		if err := removeControl(e, "sleep"); err != nil {
			t.Fatal(err)
		}
		// Wait out the lease the killed run last wrote (times are kept to the second).
		time.Sleep(time.Until(e.lockHolder(n).Expires) + 1100*time.Millisecond)
		seen := len(e.srv.Dispatches())
		r := e.start("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil, runOpts{track: true}).wait()
		if r.exit != 0 || r.outputs["step"] != "plan" {
			t.Fatalf("the run after the lease: exit %d, outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
		}
		if want := "took over a stale lock held by Actions run " + itoa(int(killed.runID)); !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "its lease expired at") {
			t.Errorf("the run after the lease does not say %q and why:\n%s", want, r.stdout)
		}
		e.follow(n, nil, seen, driveOpts{reruns: 3})
		finishAfterTakeover(t, e, n, ref, killed)
	})
}
