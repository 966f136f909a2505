package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowLostDispatch: a run whose next run's dispatch is lost (engine.Lost, which the Action calls when
// GitHub does not take the dispatch) leaves the record's waiting (when, and the step the lost run was to
// take), a line in the status comment, and ralph's mark refs/ralph/waiting/N; a sweep takes the issue
// before an older ready one; the next run of the issue clears the field in the record write it makes
// anyway, and deletes the mark. A run that holds the issue goes on with it: nothing is marked then.
func TestFlowLostDispatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	older := h.enrolled("Parse gadgets") // ready, and older: a sweep's oldest-first order picks it first
	n := h.enrolled("Parse widgets")
	h.advance(n) // research: Ready for Plan; the run's dispatch of the plan is then lost
	if waits, err := h.eng.Lost(ctx, n, "", false); err != nil || !waits {
		t.Fatalf("Lost = %v, %v; want it waiting", waits, err)
	}
	rec := h.gh.record(t, n)
	want := &record.SweepWait{Since: today, Step: workflow.Plan}
	if diff := cmp.Diff(want, rec.Waiting); diff != "" {
		t.Errorf("record's waiting (-want +got):\n%s", diff)
	}
	if body := h.gh.statusBody(n); !strings.Contains(body, "The next step (plan) was not started.") || !strings.Contains(body, "The next sweep") {
		t.Errorf("the status comment does not say the plan was not started and the next sweep takes it:\n%s", body)
	}
	mark := "refs/ralph/waiting/" + strconv.Itoa(n)
	if out, err := h.originGit("for-each-ref", "--format=%(refname)", "refs/ralph/waiting/"); err != nil || out != mark {
		t.Fatalf("marks on the origin = %q, %v; want %s", out, err, mark)
	}
	marks, err := h.eng.WaitingIssues(ctx)
	if err != nil || len(marks) != 1 || marks[n] == "" {
		t.Fatalf("WaitingIssues = %v, %v; want #%d", marks, err, n)
	}

	opts := sweep.Options{Max: 1, Waiting: func(ctx context.Context) (map[int]bool, error) {
		m, err := h.eng.WaitingIssues(ctx)
		out := map[int]bool{}
		for k := range m {
			out[k] = true
		}
		return out, err
	}}
	sw, err := sweep.Candidates(ctx, h.lister, h.eng.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(sw.Picked, []int{n}) || !cmp.Equal(sw.Waited, []int{n}) {
		t.Errorf("sweep picked %v (waited %v), want [%d] before the older #%d", sw.Picked, sw.Waited, n, older)
	}
	opts.Waiting = nil
	if sw, _ := sweep.Candidates(ctx, h.lister, h.eng.Config, opts); !cmp.Equal(sw.Picked, []int{older}) {
		t.Errorf("without the marks the sweep picked %v, want the older #%d (the test's premise)", sw.Picked, older)
	}

	// The next run goes on with it: the plan step's own record writes clear the field.
	writes := h.gh.writeCount()
	res := h.advance(n)
	if res.Step != workflow.Plan {
		t.Fatalf("next run took %q, want plan", res.Step)
	}
	if rec := h.gh.record(t, n); rec.Waiting != nil {
		t.Errorf("record's waiting after the next run = %+v, want none", rec.Waiting)
	}
	if body := h.gh.statusBody(n); strings.Contains(body, "was not started") {
		t.Errorf("the status comment still says a step was not started:\n%s", body)
	}
	if out, _ := h.originGit("for-each-ref", "refs/ralph/waiting/"); out != "" {
		t.Errorf("the mark is left after the next run: %q", out)
	}
	planWrites := h.gh.writeCount() - writes

	// A plan step of an issue that never waited makes as many writes: the field goes with them.
	other := h.enrolled("Parse doohickeys")
	h.advance(other)
	writes = h.gh.writeCount()
	h.advance(other)
	if got := h.gh.writeCount() - writes; got != planWrites {
		t.Errorf("a plan step wrote %d times after a wait, %d otherwise: clearing the wait costs a request", planWrites, got)
	}

	// A run holds the issue: it goes on with it, and nothing says it waits.
	h.lock.mu.Lock()
	h.lock.held = map[int]string{other: "Actions run 9"}
	h.lock.mu.Unlock()
	if waits, err := h.eng.Lost(ctx, other, "", false); err != nil || waits {
		t.Fatalf("Lost of a held issue = %v, %v; want nothing waiting", waits, err)
	}
	if rec := h.gh.record(t, other); rec.Waiting != nil {
		t.Errorf("a held issue's record says it waits: %+v", rec.Waiting)
	}
	if out, _ := h.originGit("for-each-ref", "refs/ralph/waiting/"); out != "" {
		t.Errorf("a held issue was marked: %q", out)
	}
}

// TestFlowLostFinish: the lost run was to finish a step GitHub failed: the record names that step.
func TestFlowLostFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Research = false })
	n := h.enrolled("Parse widgets")
	h.advance(n) // plan: Plan in Review
	if waits, err := h.eng.Lost(context.Background(), n, workflow.Plan, true); err != nil || !waits {
		t.Fatalf("Lost = %v, %v; want it waiting", waits, err)
	}
	if w := h.gh.record(t, n).Waiting; w == nil || w.Step != workflow.Plan || !w.Finish {
		t.Errorf("record's waiting = %+v, want the run to finish plan", w)
	}
	if body := h.gh.statusBody(n); !strings.Contains(body, "The run to finish plan was not started.") {
		t.Errorf("the status comment does not say the run to finish plan was not started:\n%s", body)
	}
}

// TestFlowLostAtGate: an issue whose next move is a person's (review: interactive) waits for no sweep: a
// lost dispatch leaves neither the record's waiting nor a mark.
func TestFlowLostAtGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Research, c.Review = false, config.ReviewInteractive })
	n := h.enrolled("Parse widgets")
	h.advance(n) // plan: Plan in Review, for a person
	if waits, err := h.eng.Lost(context.Background(), n, "", false); err != nil || waits {
		t.Fatalf("Lost at a person's gate = %v, %v; want nothing waiting", waits, err)
	}
	if w := h.gh.record(t, n).Waiting; w != nil {
		t.Errorf("record's waiting = %+v at a person's gate, want none", w)
	}
	if out, _ := h.originGit("for-each-ref", "refs/ralph/waiting/"); out != "" {
		t.Errorf("an issue at a person's gate was left marked: %q", out)
	}
}
