package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The children step: a parent split into sub-issues is not implemented itself; it follows them, to In Review
// when all are In Review or Done, to Done when all are Done, and starts those whose blockers are done.

func childrenStep(from workflow.State, to ...workflow.State) Step {
	return Step{Name: workflow.Children, From: from, To: to, Guard: Guard{"a parent", isParent}, Agent: Never, Do: (*Runner).children,
		Waits: func(Record, config.Config) Wait { return WaitSubIssues },
		Describe: func(from, to workflow.State, rec Record) string {
			if from != to {
				return ""
			}
			return "sub-issues: " + childSummary(rec)
		}}
}

func isParent(rec Record, _ config.Config) bool { return len(rec.Children) > 0 }

// childState is a sub-issue's state as its parent sees it: closed is done (or canceled); open, what ralph's
// record of it says. Its labels are a view anyone with triage permission can change, so they are believed
// only while they show what the parent last saw; a sub-issue whose label moved since is read from its
// record (one request, for the sub-issue that moved, which is the one that dispatched the parent).
func (r *Runner) childState(ctx context.Context, k ghapi.Issue) (workflow.State, error) {
	s := labelState(k)
	if k.State == "closed" || s == "" || string(s) == r.ic.Rec.ChildStates[strconv.Itoa(k.Number)] {
		return s, nil
	}
	comments, err := r.gh.Comments(ctx, k.Number)
	if err != nil {
		return "", fmt.Errorf("reading the record of sub-issue #%d: %w", k.Number, err)
	}
	found, err := r.people.Find(ctx, k.Number, comments, r.cfg)
	if err != nil {
		return "", err
	}
	if found.Status == nil {
		return "", nil
	}
	if found.Unusable != nil {
		r.log.Warnf("#%d: sub-issue #%d: %v", r.ic.N, k.Number, found.Unusable)
		return "", nil
	}
	rec := found.Record
	if rec.State != s {
		r.log.Warnf("#%d: sub-issue #%d's label says %s, its record %s: the record counts", r.ic.N, k.Number, s.Title(), rec.State.Title())
	}
	return rec.State, nil
}

// labelState is a sub-issue's state as its labels and its open or closed state show it.
func labelState(is ghapi.Issue) workflow.State {
	if st := workflow.StatesFromLabels(is.LabelNames()); len(st) == 1 {
		if is.State == "closed" && st[0] != workflow.Canceled {
			return workflow.Done
		}
		return st[0]
	}
	if is.State == "closed" {
		if is.StateReason == "not_planned" {
			return workflow.Canceled
		}
		return workflow.Done
	}
	return "" // enrolled, not started
}

// startable lists the children that have not started and whose blockers are done: the ones a parent's run
// dispatches. states nil: none has started (just split).
func startable(rec Record, states map[int]workflow.State) []int {
	done := func(n int) bool { s := states[n]; return s == workflow.Done || s == workflow.Canceled }
	var out []int
	for _, c := range rec.Children {
		if states[c] != "" {
			continue
		}
		ready := true
		for _, b := range rec.ChildDeps[strconv.Itoa(c)] {
			ready = ready && done(b)
		}
		if ready {
			out = append(out, c)
		}
	}
	return out
}

// children is a parent's step: In Review when all its sub-issues are In Review or Done, Done when all are
// Done; otherwise it waits, and starts the sub-issues whose blockers are done.
func (r *Runner) children(ctx context.Context, rec *Record) (Outcome, error) {
	kids, err := r.gh.SubIssues(ctx, r.ic.N)
	if err != nil {
		return Outcome{}, fmt.Errorf("listing the sub-issues of #%d: %w", r.ic.N, err)
	}
	states := map[int]workflow.State{}
	summary := map[string]string{}
	allDone, allReview := len(kids) > 0, len(kids) > 0
	for _, k := range kids {
		s, err := r.childState(ctx, k)
		if err != nil {
			return Outcome{}, err
		}
		states[k.Number] = s
		summary[strconv.Itoa(k.Number)] = string(s)
		finished := s == workflow.Done || s == workflow.Canceled
		allDone = allDone && finished
		allReview = allReview && (finished || s == workflow.InReview)
	}
	if len(rec.Children) == 0 {
		for _, k := range kids {
			rec.Children = append(rec.Children, k.Number)
		}
	}
	changed := !mapsEqual(summary, rec.ChildStates)
	rec.ChildStates = summary
	out := Outcome{Dispatch: startable(*rec, states)}
	switch {
	case allDone:
		out.To = workflow.Done
	case allReview && r.ic.State == workflow.InProgress:
		out.To = workflow.InReview
	case !changed:
		// Nothing moved: nothing to record.
		out.Wait = &Waiting{Message: fmt.Sprintf("#%d waits for its sub-issues: %s", r.ic.N, childSummary(*rec))}
	}
	// Otherwise the children's new states are recorded; the parent stays where it is.
	return out, nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// childSummary lists the sub-issues and their states: "#4 Done, #5 In Progress".
func childSummary(rec Record) string {
	var parts []string
	for _, c := range rec.Children {
		st := workflow.State(rec.ChildStates[strconv.Itoa(c)])
		title := "not started"
		if st != "" {
			title = st.Title()
		}
		parts = append(parts, fmt.Sprintf("#%d %s", c, title))
	}
	return strings.Join(parts, ", ")
}

// OpenBlockers lists the open issues that block issue n (one request). The planner asks it only for a
// sub-issue of ralph's before its first step; a sweep, for every issue the listing says is blocked.
func OpenBlockers(ctx context.Context, gh interface {
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
}, n int) ([]int, error) {
	blockers, err := gh.BlockedBy(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("reading what blocks #%d: %w", n, err)
	}
	open := []int{}
	for _, b := range blockers {
		if b.State == "open" {
			open = append(open, b.Number)
		}
	}
	return open, nil
}
