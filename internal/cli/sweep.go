package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
)

// SweepOptions are `gh ralph sweep`'s.
type SweepOptions struct {
	Repo     string
	Max      int // 0: sweep.max of the config
	DryRun   bool
	Exporter exporter
}

// NewCmdSweep builds `gh ralph sweep [--max K] [--dry-run]`.
func NewCmdSweep(f *Factory, runF func(context.Context, *SweepOptions) error) *cobra.Command {
	opts := &SweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Advance what a scheduled sweep would advance",
		Long: `List the enrolled open issues that have a step ralph can run now (not at a gate, not held by a
live run, not done, not blocked by an open issue), those with a priority: label first
(priority:critical, high, medium, low, or a number, lowest first), then the oldest, at most --max
(default: sweep.max of .github/ralph.yml), and advance each by one step here, as the Action's
scheduled sweep does.

With --dry-run it only prints the issue numbers, one per line off a terminal.

` + stepColumns + ` The JSON is a list: one object per issue advanced (with
--dry-run, per issue a sweep would advance, outcome dry-run), and one per issue passed over, with
outcome skipped and the reason as its message.`,
		Example: `  $ gh ralph sweep --dry-run
  $ gh ralph sweep --max 2
  $ gh ralph sweep --dry-run --json number,outcome,message`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if cmd.Flags().Changed("max") && opts.Max < 1 {
				return flagErrorf(cmd, "--max must be at least 1")
			}
			if err := opts.Exporter.check(cmd, stepFields); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return sweepRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().IntVar(&opts.Max, "max", 0, "Advance at most `K` issues (default: sweep.max of the config)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "Only list the issues a sweep would advance")
	addJSONFlags(cmd, &opts.Exporter, stepFields)
	addRepoFlag(cmd)
	return cmd
}

func sweepRun(ctx context.Context, f *Factory, opts *SweepOptions) error {
	out := &stepOutput{f: f, exp: &opts.Exporter}
	return out.flush(sweepSteps(ctx, f, opts, out))
}

func sweepSteps(ctx context.Context, f *Factory, opts *SweepOptions, out *stepOutput) error {
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	defer s.release()
	var eng *engine.Engine
	cfg, err := s.configOrDefault(ctx)
	if err != nil {
		return err
	}
	if !opts.DryRun {
		// Advancing needs the checkout: fail before anything is listed, not halfway.
		log := f.termLog()
		log.interrupted = func() bool { return ctx.Err() != nil }
		eng, err = s.engineFor(ctx, log, false, true)
		if err != nil {
			return err
		}
		cfg = eng.Config
	}
	max := opts.Max
	if max == 0 {
		max = cfg.Sweep.Max
	}
	sweepOpts := sweep.Options{
		Max:        max,
		Auth:       engine.PermissionAuthorizer{Permission: s.gh.Permission, AllowedBots: cfg.AllowedBots},
		TrustedBot: "github-actions[bot]",
	}
	// The issues whose last run's dispatch was lost, by ralph's marks (one git ls-remote): taken first,
	// as a scheduled sweep takes them.
	var marks map[int]string
	if eng != nil {
		compose.SweepLocks(eng, &sweepOpts)
		sweepOpts.Waiting = func(ctx context.Context) (map[int]bool, error) {
			m, err := eng.WaitingIssues(ctx)
			marks = m
			waiting := map[int]bool{}
			for n := range m {
				waiting[n] = true
			}
			return waiting, err
		}
	}
	sw, err := sweep.Candidates(ctx, s.gh, cfg, sweepOpts)
	if err != nil {
		return err
	}
	for _, n := range sw.Waited {
		// Its run starts now, here.
		if err := eng.ForgetWaiting(ctx, n, marks[n]); err != nil {
			fmt.Fprintf(f.Stderr, "%s deleting the mark of #%d, which waited for a sweep: %v\n", colorizer(f.ErrColor).warn("warning:"), n, err)
		}
	}
	picked, skipped, looked := sw.Picked, sw.Skipped, sw.Looked
	var errs []error
	for _, sk := range skipped {
		fmt.Fprintf(f.Stderr, "%s skipping #%d: %s\n", colorizer(f.ErrColor).warn("warning:"), sk.Issue, sk.Reason)
		out.addJSON(map[string]any{"number": sk.Issue, "step": "", "from": "", "state": "", "outcome": "skipped", "pullRequest": "", "message": oneLine(sk.Reason)})
		if sk.Err != nil {
			errs = append(errs, fmt.Errorf("passed over #%d: %w", sk.Issue, sk.Err))
		}
	}
	switch {
	case opts.Exporter.enabled():
		if opts.DryRun {
			for _, n := range picked {
				out.addJSON(map[string]any{"number": n, "step": "", "from": "", "state": "", "outcome": "dry-run", "pullRequest": "", "message": "a sweep would advance it"})
			}
		}
	case f.StdoutTTY:
		nums := make([]string, len(picked))
		for i, n := range picked {
			nums[i] = fmt.Sprintf("#%d", n)
		}
		verb := "to advance"
		if opts.DryRun {
			verb = "a sweep would advance"
		}
		fmt.Fprintf(f.Stdout, "%s; %d %s: %s\n", plural(looked, "enrolled open issue", "enrolled open issues"), len(picked), verb, orNone(strings.Join(nums, ", ")))
	case opts.DryRun:
		for _, n := range picked {
			fmt.Fprintln(f.Stdout, n)
		}
	}
	if opts.DryRun {
		return nil
	}
	for _, n := range picked {
		if ctx.Err() != nil {
			break
		}
		res, err := eng.Handle(ctx, engine.Request{Action: engine.ActAdvance, Issue: n})
		out.add(res, err)
		if err != nil {
			errs = append(errs, fmt.Errorf("#%d: %w", n, commandFailure(res, err)))
		}
	}
	return errors.Join(errs...)
}
