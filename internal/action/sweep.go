package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// sweep finds enrolled open issues with a step to do, oldest first, at most sweep.max, and advances them one
// after another (or, with sweep.matrix or dry_run, only lists them in the `issues` output).
func (r *runner) sweep(ctx context.Context, eng *engine.Engine, gh *ghapi.Client, cfg config.Config) error {
	picked, skipped, looked, err := engine.SweepCandidates(ctx, gh, eng.Auth, cfg, cfg.Sweep.Max)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		r.a.Warningf("sweep: skipping #%d: %s", s.Issue, s.Reason)
	}
	r.issues = picked
	r.a.Infof("sweep: %d enrolled open issues, %d to advance: %v", looked, len(r.issues), r.issues)
	if r.dryRun || cfg.Sweep.Matrix {
		r.outputs()
		r.summary(fmt.Sprintf("Sweep: %d issues to advance.", len(r.issues)), nil)
		return nil
	}
	var errs []error
	for _, n := range r.issues {
		res, err := r.one(ctx, eng, Trigger{Command: CmdAdvance}, n)
		r.results = append(r.results, res)
		if err != nil {
			errs = append(errs, err)
		}
	}
	r.outputs()
	err = errors.Join(errs...)
	r.summary(fmt.Sprintf("Sweep: advanced %d issues.", len(r.issues)), err)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}
