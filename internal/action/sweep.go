package action

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
)

// chainPath is the path of the workflow the chain dispatches: chainFile's, else this run's own.
func (r *runner) chainPath() string {
	if r.chainFile != "" {
		return ".github/workflows/" + r.chainFile
	}
	file, _, _ := strings.Cut(r.ev.WorkflowRef, "@")
	return ".github/workflows/" + path.Base(file)
}

// sweep finds enrolled open issues with a step to do, oldest first, at most sweep.max, and advances them one
// after another (or, with sweep.matrix or dry_run, only lists them in the `issues` output).
func (r *runner) sweep(ctx context.Context, eng *engine.Engine, gh *ghapi.Client, cfg config.Config) error {
	opts := sweep.Options{Max: cfg.Sweep.Max, Auth: eng.Auth, TrustedBot: "github-actions[bot]"}
	compose.SweepLocks(eng, &opts)
	// The runs of chains queued or running (by their run-name, which examples/ralph.yml sets): this run's
	// own is a sweep's, and names no issue.
	opts.Chains = func(ctx context.Context) (map[int]bool, error) {
		runs, err := gh.UnfinishedRuns(ctx)
		if err != nil {
			return nil, err
		}
		return sweep.ChainRuns(runs, r.chainPath()), nil
	}
	// The issues whose last run's dispatch was lost, by ralph's marks (one git ls-remote): taken first.
	var marks map[int]string
	opts.Waiting = func(ctx context.Context) (map[int]bool, error) {
		m, err := eng.WaitingIssues(ctx)
		if err != nil {
			return nil, err
		}
		marks = m
		waiting := map[int]bool{}
		for n := range m {
			waiting[n] = true
		}
		return waiting, nil
	}
	sw, err := sweep.Candidates(ctx, gh, cfg, opts)
	if err != nil {
		return err
	}
	if len(sw.Waited) > 0 {
		r.a.Infof("sweep: taking first %v, whose last run's dispatch GitHub did not take", sw.Waited)
	}
	if !r.dryRun {
		r.forgetMarks(ctx, eng, marks, sw)
	}
	var errs []error
	for _, s := range sw.Skipped {
		r.a.Warningf("sweep: skipping #%d: %s", s.Issue, s.Reason)
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("sweep: passed over #%d: %w", s.Issue, s.Err))
		}
	}
	r.issues = sw.Picked
	r.a.Infof("sweep: %s, %d looked at closely, %d to advance: %v", plural(sw.Looked, "enrolled open issue", "enrolled open issues"), sw.Close, len(r.issues), r.issues)
	if r.dryRun || cfg.Sweep.Matrix {
		r.outputs()
		r.summary(fmt.Sprintf("Sweep: %s to advance.", plural(len(r.issues), "issue", "issues")), nil)
		return nil
	}
	for _, n := range r.issues {
		errs = append(errs, r.oneAndChain(ctx, eng, gh, cfg, Trigger{Action: engine.ActAdvance}, n)...)
	}
	// Advanced here: nothing is left for a matrix job (the summary lists what ran).
	r.issues = []int{}
	// The counts of runs dispatched to finish a step (engine/finish.go) of issues that are done with.
	if forgot, ferr := eng.ForgetFinishing(ctx, sw.Open); ferr != nil {
		r.a.Warningf("sweep: the finishing counts of closed issues could not all be deleted (the next sweep tries again): %v", ferr)
	} else if len(forgot) > 0 {
		r.a.Infof("sweep: deleted the finishing counts of issues no longer open: %v", forgot)
	}
	r.noteCI()
	r.outputs()
	err = errors.Join(errs...)
	r.summary(fmt.Sprintf("Sweep: advanced %s.", plural(len(r.results), "issue", "issues")), err)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// forgetMarks deletes the marks of the issues this sweep takes (their runs start now, here or in the
// matrix job) and of those no longer open and enrolled. A mark left on an issue taken elsewhere meanwhile
// is deleted by the run that goes on with it, as its record says, or by the sweep that next takes it.
func (r *runner) forgetMarks(ctx context.Context, eng *engine.Engine, marks map[int]string, sw sweep.Result) {
	for n, sha := range marks {
		if !slices.Contains(sw.Waited, n) && slices.Contains(sw.Open, n) {
			continue
		}
		if err := eng.ForgetWaiting(ctx, n, sha); err != nil {
			r.a.Warningf("sweep: deleting the mark of #%d, which waited for a sweep (the next sweep tries again): %v", n, err)
		}
	}
}

// plural is "1 phase", "2 phases": n and the word for it.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
