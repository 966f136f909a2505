// Package sweep picks the enrolled issues a scheduled sweep advances: those with a step ralph can run now,
// in the order it takes them, and why it passed over the others. It reads GitHub and the planner
// (engine.Ready); it runs nothing.
package sweep

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Lister is what a sweep needs of GitHub; *ghapi.Client implements it.
type Lister interface {
	Issues(ctx context.Context, f ghapi.IssueFilter) ([]ghapi.Issue, error)
	LabeledBy(ctx context.Context, n int, label string) (string, error)
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
	MatchingRefs(ctx context.Context, prefix string) ([]ghapi.Ref, error)
}

// LockCheck says whether the lock an issue has is still held by a live run (and by whom); a stale lock is
// not, and the run the sweep starts takes it over.
type LockCheck func(ctx context.Context, issue int) (live bool, holder string, err error)

// Skipped is an enrolled issue a sweep passed over, and why. Err is set when GitHub failed a request about
// the issue (its lock, its blockers, who enrolled it): the issue is passed over by this sweep only, the next
// one looks again.
type Skipped struct {
	Issue  int
	Reason string
	Err    error
}

// Result is what a sweep found.
type Result struct {
	Picked  []int     // the issues to advance, in order
	Skipped []Skipped // issues with a step to do that were passed over, and why
	Looked  int       // enrolled open issues listed
	Open    []int     // their numbers
	Close   int       // issues looked at closely (locks, dependencies, who enrolled them)
	// Waited are the picked issues that waited for a sweep (their last run's dispatch was lost): they
	// come first in Picked.
	Waited []int
}

// Options tune a sweep.
type Options struct {
	Max   int
	Auth  engine.Authorizer // who may have enrolled an issue; nil: anyone
	Locks LockCheck         // nil: any lock counts as live
	// Locked lists the issues that have a lock (one git ls-remote for lock.Locker); nil: the refs API.
	Locked func(ctx context.Context) (map[int]bool, error)
	// Chains lists the issues a run of whose chain is queued or running (one request for them all, see
	// ChainRuns): a sweep passes over them at no further cost. nil: none is known.
	Chains func(ctx context.Context) (map[int]bool, error)
	// Waiting lists the issues whose last run's dispatch GitHub did not take (one git ls-remote, see
	// Engine.WaitingIssues): the sweep takes them first. Asked only when some issue is ready. nil: none.
	Waiting func(ctx context.Context) (map[int]bool, error)
	// TrustedBot is the account ralph itself acts as (the Actions token's bot); a sub-issue ralph created
	// and enrolled counts as enrolled by whoever enrolled its parent, which a sweep already checked.
	TrustedBot string
}

// Candidates lists enrolled open issues that have a step ralph can run now: not at a gate, not terminal,
// not held by a live lock, not blocked by an open issue, and enrolled by someone who may drive ralph.
// Issues whose last run's dispatch was lost (opts.Waiting) come first, then issues with a priority label
// (priority:critical, high, medium, low, or a number, lowest first), then the oldest.
func Candidates(ctx context.Context, gh Lister, cfg config.Config, opts Options) (Result, error) {
	var sw Result
	open, err := gh.Issues(ctx, ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}})
	if err != nil {
		return sw, fmt.Errorf("listing enrolled issues: %w", err)
	}
	sw.Looked = len(open)
	for _, is := range open {
		sw.Open = append(sw.Open, is.Number)
	}
	sw.Picked = []int{}
	var ready []ghapi.Issue
	for _, is := range open {
		if engine.Ready(is.LabelNames(), cfg) {
			ready = append(ready, is)
		}
	}
	if len(ready) == 0 {
		return sw, nil
	}
	slices.SortStableFunc(ready, func(a, b ghapi.Issue) int { return priority(a) - priority(b) })
	var waiting map[int]bool
	if opts.Waiting != nil {
		if waiting, err = opts.Waiting(ctx); err != nil {
			return sw, fmt.Errorf("listing the issues that wait for a sweep: %w", err)
		}
		// They were under way when their run's dispatch was lost: before those not started yet.
		slices.SortStableFunc(ready, func(a, b ghapi.Issue) int { return rank(waiting[b.Number]) - rank(waiting[a.Number]) })
	}

	locked, err := lockedIssues(ctx, gh, opts)
	if err != nil {
		return sw, fmt.Errorf("listing the issue locks: %w", err)
	}
	var running map[int]bool
	if opts.Chains != nil {
		if running, err = opts.Chains(ctx); err != nil {
			return sw, fmt.Errorf("listing the runs not yet finished: %w", err)
		}
	}
	trusted := map[string]bool{}
	// A request about one issue that GitHub fails passes over that issue only, so that one issue GitHub
	// cannot answer about does not stop every sweep; it takes a place of the sweep all the same, which
	// bounds what a sweep asks while GitHub fails.
	failed := 0
	for _, is := range ready {
		if len(sw.Picked)+failed >= opts.Max {
			break
		}
		if running[is.Number] {
			// Its step is queued or running: that run goes on with it, and a run of the sweep's would
			// only find it locked.
			sw.Skipped = append(sw.Skipped, Skipped{Issue: is.Number, Reason: "a run of its chain is queued or running"})
			continue
		}
		sw.Close++
		skip := func(format string, args ...any) {
			sw.Skipped = append(sw.Skipped, Skipped{Issue: is.Number, Reason: fmt.Sprintf(format, args...)})
		}
		fail := func(err error) {
			failed++
			sw.Skipped = append(sw.Skipped, Skipped{Issue: is.Number, Reason: err.Error() + " (the next sweep looks again)", Err: err})
		}
		if locked[is.Number] {
			live, holder := true, "another run"
			if opts.Locks != nil {
				if live, holder, err = opts.Locks(ctx, is.Number); err != nil {
					fail(fmt.Errorf("reading the lock of #%d: %w", is.Number, err))
					continue
				}
			}
			if live {
				skip("held by %s", holder)
				continue
			}
		}
		// The listing says how many issues block this one: none, and there is nothing to read. Otherwise
		// (or when GitHub's answer did not say) the blockers are read, to name the open ones.
		if d := is.Dependencies; d == nil || d.TotalBlockedBy > 0 {
			open, err := engine.OpenBlockers(ctx, gh, is.Number)
			if err != nil {
				fail(err)
				continue
			}
			if len(open) > 0 {
				skip("blocked by %s", issueList(open))
				continue
			}
		}
		if opts.Auth != nil {
			who, err := gh.LabeledBy(ctx, is.Number, workflow.LabelBuild)
			if err != nil {
				fail(fmt.Errorf("reading who enrolled #%d: %w", is.Number, err))
				continue
			}
			ok, seen := trusted[who]
			switch {
			case who == "":
				ok = false
			case who == opts.TrustedBot && plantext.RalphsSubIssue(is.Body, is.User.Login, opts.TrustedBot):
				ok = true
			case !seen:
				if ok, err = opts.Auth.Authorize(ctx, who); err != nil {
					fail(fmt.Errorf("checking the permission of @%s, who enrolled #%d: %w", who, is.Number, err))
					continue
				}
				trusted[who] = ok
			}
			if !ok {
				if who == "" {
					skip("no event says who added %s", workflow.LabelBuild)
				} else {
					skip("%s was added by @%s, who may not drive ralph", workflow.LabelBuild, who)
				}
				continue
			}
		}
		sw.Picked = append(sw.Picked, is.Number)
		if waiting[is.Number] {
			sw.Waited = append(sw.Waited, is.Number)
		}
	}
	return sw, nil
}

func rank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RunTitle is the title a run of ralph's workflow on one issue has (its run-name, as examples/ralph.yml and
// gh ralph init write it): "ralph #47".
const RunTitle = "ralph #"

// ChainRuns are the issues that a run not yet finished (runs, from ghapi's UnfinishedRuns) of the chain's
// workflow (path, .github/workflows/ralph.yml) is about, by its title (RunTitle). Only runs a dispatch or a
// label started count: a title is what anyone's event makes of it (a pull request's title, a comment's
// issue), and a run someone without write access keeps waiting must not keep a sweep off an issue.
func ChainRuns(runs []ghapi.WorkflowRun, path string) map[int]bool {
	out := map[int]bool{}
	for _, r := range runs {
		if r.Path != path || r.Event != "workflow_dispatch" && r.Event != "issues" {
			continue
		}
		rest, ok := strings.CutPrefix(r.DisplayTitle, RunTitle)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(num); err == nil && n > 0 {
			out[n] = true
		}
	}
	return out
}

func lockedIssues(ctx context.Context, gh Lister, opts Options) (map[int]bool, error) {
	if opts.Locked != nil {
		return opts.Locked(ctx)
	}
	refs, err := gh.MatchingRefs(ctx, "ralph/locks/")
	if err != nil {
		return nil, err
	}
	locked := map[int]bool{}
	for _, r := range refs {
		if n, err := strconv.Atoi(strings.TrimPrefix(r.Ref, "refs/ralph/locks/")); err == nil {
			locked[n] = true
		}
	}
	return locked, nil
}

// priority ranks an issue by its priority label; issues without one come last.
func priority(is ghapi.Issue) int {
	best := 1000
	for _, l := range is.LabelNames() {
		v, ok := strings.CutPrefix(strings.ToLower(l), "priority:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		rank := 1000
		switch v {
		case "critical", "urgent":
			rank = 0
		case "high":
			rank = 1
		case "medium", "normal":
			rank = 2
		case "low":
			rank = 3
		default:
			if n, err := strconv.Atoi(strings.TrimPrefix(v, "p")); err == nil && n >= 0 {
				rank = n
			}
		}
		best = min(best, rank)
	}
	return best
}

// issueList names issues as GitHub links them: "#4, #5".
func issueList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
