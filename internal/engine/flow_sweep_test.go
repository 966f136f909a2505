package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowSweep: a sweep picks enrolled open issues with a step to do, priority first then oldest, and
// says why it passed over the others.
func TestFlowSweep(t *testing.T) {
	t.Parallel()
	gh := newHub(t)
	b := workflow.LabelBuild
	ready := gh.addIssue("ready", "", b, workflow.ResearchNeeded.Label())                        // 1
	gh.addIssue("at a gate", "", b, workflow.InReview.Label())                                   // 2
	locked := gh.addIssue("locked", "", b, workflow.ReadyForPlan.Label())                        // 3
	blocked := gh.addIssue("blocked", "", b, workflow.ReadyForPlan.Label())                      // 4
	blocker := gh.addIssue("blocker", "")                                                        // 5
	stranger := gh.addIssue("stranger's", "")                                                    // 6
	urgent := gh.addIssue("urgent", "", b, workflow.InProgress.Label(), "priority:high")         // 7
	stale := gh.addIssue("stale lock", "", b, workflow.PlanInReview.Label())                     // 8
	closed := gh.addIssue("closed", "", b)                                                       // 9
	child := gh.issueBy(ralphAs, "ralph's sub-issue", "body\n<!-- ralph:parent 1 part 1 -->", b) // 10
	gh.addIssue("done", "", b, workflow.Done.Label())                                            // 11
	gh.srv.AddLabel(stranger, b, "mallory")
	gh.close(closed, "completed")
	gh.srv.AddBlockedBy(blocked, blocker)
	for _, ref := range []string{"refs/ralph/locks/3", "refs/ralph/locks/8", "refs/ralph/locks/x"} {
		gh.setRef(t, ref)
	}
	cfg := config.Default()
	opts := engine.SweepOptions{
		Max: 10, Auth: &fakeAuth{allowed: map[string]bool{"alice": true}}, TrustedBot: ralphAs,
		Locks: func(_ context.Context, n int) (bool, string, error) { return n == locked, "Actions run 5", nil },
	}
	sw, err := engine.SweepCandidates(context.Background(), gh.client, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Sweep{
		Picked: []int{urgent, ready, stale, child},
		Skipped: []engine.Skipped{
			{Issue: locked, Reason: "held by Actions run 5"},
			{Issue: blocked, Reason: "blocked by #5"},
			{Issue: stranger, Reason: "ralph:build was added by @mallory, who may not drive ralph"},
		},
		Looked: 9, Close: 7,
		// Every enrolled open issue: not the blocker (not enrolled) nor the closed one.
		Open: []int{ready, 2, locked, blocked, stranger, urgent, stale, child, 11},
	}
	if diff := cmp.Diff(want, sw); diff != "" {
		t.Errorf("SweepCandidates (-want +got):\n%s", diff)
	}

	// Interactive review: Plan in Review is a gate. Max bounds what is picked.
	cfg.Review = config.ReviewInteractive
	opts.Max = 1
	sw, err = engine.SweepCandidates(context.Background(), gh.client, cfg, opts)
	if err != nil || !cmp.Equal(sw.Picked, []int{urgent}) {
		t.Errorf("SweepCandidates = %+v, %v", sw, err)
	}

	// GitHub failing the listings is the sweep's error; failing a request about one issue passes over
	// that issue (with the error), and the sweep goes on to the next, each failure taking a place of the
	// sweep's max.
	for _, m := range []string{"BlockedBy", "LabeledBy"} {
		gh.failCall(m, 0, 500)
		sw, err := engine.SweepCandidates(context.Background(), gh.client, config.Default(), engine.SweepOptions{Max: 5, Auth: opts.Auth})
		if err != nil {
			t.Errorf("SweepCandidates with %s failing: %v, want the issues passed over", m, err)
			continue
		}
		failed := 0
		for _, s := range sw.Skipped {
			if s.Err != nil {
				failed++
			}
		}
		if failed == 0 || len(sw.Picked)+failed > 5 {
			t.Errorf("SweepCandidates with %s failing: picked %v, skipped %+v; want failures passed over, within max", m, sw.Picked, sw.Skipped)
		}
	}
	for _, m := range []string{"Issues", "MatchingRefs"} {
		gh.failCall(m, 0, 500)
		if _, err := engine.SweepCandidates(context.Background(), gh.client, config.Default(), engine.SweepOptions{Max: 5, Auth: opts.Auth}); err == nil {
			t.Errorf("SweepCandidates with %s failing: no error", m)
		}
	}
	sw, err = engine.SweepCandidates(context.Background(), newSweepHub(t).client, config.Default(), engine.SweepOptions{Max: 5, Auth: &fakeAuth{err: errors.New("down")}})
	if err != nil || len(sw.Skipped) == 0 || sw.Skipped[0].Err == nil || !strings.Contains(sw.Skipped[0].Reason, "down") {
		t.Errorf("SweepCandidates with the permission check failing: %+v, %v", sw, err)
	}
}

// newSweepHub holds two issues ready for a step, enrolled by alice.
func newSweepHub(t *testing.T) *hub {
	gh := newHub(t)
	gh.addIssue("one", "", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	gh.addIssue("two", "", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	return gh
}

// TestFlowSweepNothing: nothing enrolled, nothing picked (an empty list, not nil, for JSON).
func TestFlowSweepNothing(t *testing.T) {
	t.Parallel()
	gh := newHub(t)
	gh.addIssue("plain", "")
	sw, err := engine.SweepCandidates(context.Background(), gh.client, config.Default(), engine.SweepOptions{Max: 5})
	if err != nil || sw.Picked == nil || len(sw.Picked) != 0 || sw.Looked != 0 {
		t.Errorf("SweepCandidates = %+v, %v", sw, err)
	}
	if gh.count("MatchingRefs") != 0 {
		t.Errorf("the locks were listed with nothing to sweep")
	}
}

// TestFlowSweepForgedSubIssue: a sweep takes the Actions bot's ralph:build as a writer's only on a
// sub-issue ralph itself opened, whose body ends with ralph's parent marker; an issue someone else opened
// whose body carries the marker (anywhere, or at its end as ralph writes it) is not one, whoever labeled it.
func TestFlowSweepForgedSubIssue(t *testing.T) {
	t.Parallel()
	b := workflow.LabelBuild
	for _, tc := range []struct {
		name, author, body string
		picked             bool
	}{
		{"ralph's sub-issue", ralphAs, "Do one.\n\n---\nPart 1 of 2 of #1, split by ralph's triage.\n<!-- ralph:parent 1 part 1 -->", true},
		{"a stranger's issue ending with the marker", "mallory", "Do it.\n<!-- ralph:parent 1 part 1 -->", false},
		{"a stranger's issue holding the marker's start", "mallory", "<!-- ralph:parent \nDo it.", false},
		{"ralph's issue with the marker not at its end", ralphAs, "<!-- ralph:parent 1 part 1 -->\nmore", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := newHub(t)
			n := gh.issueBy(tc.author, "part", tc.body, workflow.ResearchNeeded.Label())
			gh.srv.AddLabel(n, b, ralphAs)
			opts := engine.SweepOptions{Max: 5, Auth: &fakeAuth{allowed: map[string]bool{"alice": true}}, TrustedBot: ralphAs}
			sw, err := engine.SweepCandidates(context.Background(), gh.client, config.Default(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(sw.Picked) == 1; got != tc.picked {
				t.Errorf("picked %v, skipped %+v; want picked: %v", sw.Picked, sw.Skipped, tc.picked)
			}
		})
	}
}
