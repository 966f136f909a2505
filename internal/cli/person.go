package cli

import (
	"context"
	"fmt"
	"path"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// EnrollOptions are `gh ralph enroll`'s.
type EnrollOptions struct {
	Repo     string
	Issue    int
	Advance  bool // run the first step here, now
	Exporter exporter
}

// ApproveOptions are `gh ralph approve`'s.
type ApproveOptions struct {
	Repo    string
	Issue   int
	Advance bool
}

// RejectOptions are `gh ralph reject`'s.
type RejectOptions struct {
	Repo    string
	Issue   int
	Reason  string
	Advance bool
}

// RetryOptions are `gh ralph retry`'s.
type RetryOptions struct {
	Repo    string
	Issue   int
	Advance bool
}

const advanceHelp = "Then run the next step here at once, as gh ralph advance would"

// NewCmdEnroll builds `gh ralph enroll N [--advance]`.
func NewCmdEnroll(f *Factory, runF func(context.Context, *EnrollOptions) error) *cobra.Command {
	opts := &EnrollOptions{}
	cmd := &cobra.Command{
		Use:   "enroll <issue>",
		Short: "Enroll an issue: add the ralph:build label",
		Long: `Enroll an issue in ralph's workflow by adding the ralph:build label as you, after checking
that you have write, maintain or admin permission on the repository (as the Action does for the
person who adds the label).

When the repository runs ralph's workflow (gh ralph init), the label starts it in GitHub Actions.
With --advance, the issue enters its first state and its first step runs here instead; do not use
--advance when the workflow will also pick the label up.

Off a terminal it prints the issue and "enrolled", tab-separated; with --advance, the step's line
instead, as gh ralph advance prints it (issue, step, from, to, outcome, pull request, message).
--json FIELDS, --jq and --template work as in gh; the JSON fields are number, step, from, state
(the state after), outcome, pullRequest and message, in one object. outcome is enrolled without
--advance, else the step's: ` + stepOutcomes + `.`,
		Example: `  $ gh ralph enroll 47
  $ gh ralph enroll 47 --advance
  $ gh ralph enroll 47 --advance --json state,outcome`,
		Args:              issueArg,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if err := opts.Exporter.check(cmd, stepFields); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return enrollRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Advance, "advance", false, "Enter the first state and run the first step here at once")
	addJSONFlags(cmd, &opts.Exporter, stepFields)
	addRepoFlag(cmd)
	return cmd
}

// NewCmdApprove builds `gh ralph approve N [--advance]`.
func NewCmdApprove(f *Factory, runF func(context.Context, *ApproveOptions) error) *cobra.Command {
	opts := &ApproveOptions{}
	cmd := &cobra.Command{
		Use:   "approve <issue>",
		Short: "Approve the plan of an issue in Plan in Review",
		Long: `Approve the plan of an issue that waits in Plan in Review (review: interactive), as the comment
/ralph approve does. The issue moves to In Progress; its first phase runs on the next advance
(the Action's sweep, gh ralph advance, or --advance).`,
		Example: `  $ gh ralph approve 47
  $ gh ralph approve 47 --advance`,
		Args:              issueArg,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return personRun(cmd.Context(), f, opts.Repo, engine.Request{Action: engine.ActApprove, Issue: opts.Issue, CommandOnly: !opts.Advance})
		},
	}
	cmd.Flags().BoolVar(&opts.Advance, "advance", false, advanceHelp)
	addRepoFlag(cmd)
	return cmd
}

// NewCmdReject builds `gh ralph reject N --reason R [--advance]`.
func NewCmdReject(f *Factory, runF func(context.Context, *RejectOptions) error) *cobra.Command {
	opts := &RejectOptions{}
	cmd := &cobra.Command{
		Use:   "reject <issue> --reason <why>",
		Short: "Send the plan of an issue back, with a reason",
		Long: `Send the plan of an issue in Plan in Review back to Ready for Plan, as the comment
/ralph reject <why> does. The reason reaches the next plan step's prompt. After max_iterations
send-backs the issue goes to Human Needed.`,
		Example:           `  $ gh ralph reject 47 --reason "split the migration into its own phase"`,
		Args:              issueArg,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if len(opts.Reason) == 0 || oneLine(opts.Reason) == "" {
				return flagErrorf(cmd, "--reason is required: say why the plan goes back")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return personRun(cmd.Context(), f, opts.Repo, engine.Request{Action: engine.ActReject, Issue: opts.Issue, Reason: opts.Reason, CommandOnly: !opts.Advance, Terminal: true})
		},
	}
	cmd.Flags().StringVarP(&opts.Reason, "reason", "r", "", "Why the plan goes back (required)")
	cmd.Flags().BoolVar(&opts.Advance, "advance", false, advanceHelp)
	addRepoFlag(cmd)
	return cmd
}

// NewCmdRetry builds `gh ralph retry N [--advance]`.
func NewCmdRetry(f *Factory, runF func(context.Context, *RetryOptions) error) *cobra.Command {
	opts := &RetryOptions{}
	cmd := &cobra.Command{
		Use:   "retry <issue>",
		Short: "Take an issue out of Human Needed",
		Long: `Take an issue out of Human Needed, back to the state it was in before, as the comment
/ralph retry does. Fix what the issue's last ralph comment describes first.`,
		Example: `  $ gh ralph retry 47
  $ gh ralph retry 47 --advance`,
		Args:              issueArg,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return personRun(cmd.Context(), f, opts.Repo, engine.Request{Action: engine.ActRetry, Issue: opts.Issue, CommandOnly: !opts.Advance})
		},
	}
	cmd.Flags().BoolVar(&opts.Advance, "advance", false, advanceHelp)
	addRepoFlag(cmd)
	return cmd
}

// personRun does a person's command as the token's owner, then (with --advance) the next step: one engine
// call (Engine.Handle), as the Action makes it.
func personRun(ctx context.Context, f *Factory, repo string, q engine.Request) error {
	s, err := f.session(repo)
	if err != nil {
		return err
	}
	defer s.release()
	if q.Actor, err = s.login(ctx); err != nil {
		return err
	}
	log := f.termLog()
	eng, err := s.engineFor(ctx, log, false, !q.CommandOnly)
	if err != nil {
		return err
	}
	res, err := eng.Handle(ctx, q)
	err = commandFailure(res, err)
	if res.Acted != nil {
		printResult(f.Stdout, f.StdoutTTY, colorizer(f.Color), *res.Acted, nil)
		printResult(f.Stdout, f.StdoutTTY, colorizer(f.Color), res, err)
		return err
	}
	if err != nil {
		return err
	}
	printResult(f.Stdout, f.StdoutTTY, colorizer(f.Color), res, nil)
	if res.Continue {
		startWorkflow(ctx, f, s, res.Issue)
	}
	return nil
}

// commandFailure is how gh ralph says that a person's command (or the step it ran) failed (err), from its
// Result: a failure recorded on the issue (Result.Recorded) is said as one, any other error as it is.
func commandFailure(res engine.Result, err error) error {
	if err != nil && res.Recorded {
		return &recordedError{Err: err}
	}
	return err
}

// startWorkflow dispatches ralph's workflow for issue n's next step, as a /ralph comment starts a run: the
// step runs on GitHub now, not at the next sweep. A dispatch that fails is said, with what else to do; the
// person's command is done either way.
func startWorkflow(ctx context.Context, f *Factory, s *session, n int) {
	wf := path.Base(WorkflowPath)
	repo, err := s.gh.Repository(ctx)
	var run ghapi.DispatchedRun
	if err == nil {
		run, err = s.gh.DispatchWorkflow(ctx, wf, repo.DefaultBranch, map[string]string{"issue": strconv.Itoa(n)})
	}
	if err != nil {
		fmt.Fprintf(f.Stderr, "%s could not start ralph's workflow (%s) for #%d: %v\n", colorizer(f.ErrColor).warn("warning:"), wf, n, err)
		fmt.Fprintf(f.Stderr, "next: ralph's workflow (its sweep) takes the next step, or run `gh ralph advance %d` to take it here\n", n)
		return
	}
	where := ""
	if run.HTMLURL != "" {
		where = ": " + run.HTMLURL
	}
	fmt.Fprintf(f.Stderr, "next: ralph's workflow takes the next step of #%d now (dispatched %s on %s%s)\n", n, wf, repo.DefaultBranch, where)
}

func enrollRun(ctx context.Context, f *Factory, opts *EnrollOptions) error {
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	defer s.release()
	login, err := s.login(ctx)
	if err != nil {
		return err
	}
	// The engine says whether the person may enroll the issue, as a run that sees the label decides.
	en, err := engine.MayEnroll(ctx, s.gh, opts.Issue, login)
	if err != nil {
		return err
	}
	switch {
	case en.Labeled && en.Trusted:
		fmt.Fprintf(f.Stderr, "#%d already has %s\n", opts.Issue, workflow.LabelBuild)
	case en.Labeled:
		// The label counts as its last adder's: someone without write access made it no one's to run, and
		// every sweep skips it. Added again by this person, it is theirs.
		if err := s.gh.RemoveLabel(ctx, opts.Issue, workflow.LabelBuild); err != nil {
			return fmt.Errorf("taking %s off #%d to add it again: %w", workflow.LabelBuild, opts.Issue, err)
		}
		if err := s.gh.AddLabels(ctx, opts.Issue, workflow.LabelBuild); err != nil {
			return fmt.Errorf("labeling #%d %s: %w", opts.Issue, workflow.LabelBuild, err)
		}
		by := "no one known"
		if en.LabeledBy != "" {
			by = "`@" + en.LabeledBy + "`, who may not drive ralph"
		}
		fmt.Fprintf(f.Stderr, "#%d had %s from %s: added it again as `@%s`, so ralph takes it\n", opts.Issue, workflow.LabelBuild, by, login)
	default:
		if err := s.gh.AddLabels(ctx, opts.Issue, workflow.LabelBuild); err != nil {
			return fmt.Errorf("labeling #%d %s: %w", opts.Issue, workflow.LabelBuild, err)
		}
	}
	if !opts.Advance {
		if opts.Exporter.enabled() {
			obj := map[string]any{"number": opts.Issue, "step": "", "from": "", "state": "", "outcome": "enrolled", "pullRequest": "", "message": "labeled " + workflow.LabelBuild}
			if err := opts.Exporter.write(f.Stdout, opts.Exporter.pick(obj), f.StdoutTTY, f.Width); err != nil {
				return err
			}
		} else if f.StdoutTTY {
			fmt.Fprintf(f.Stdout, "%s #%d enrolled (%s)\n", colorizer(f.Color).ok("✓"), opts.Issue, workflow.LabelBuild)
		} else {
			fmt.Fprintf(f.Stdout, "%d\tenrolled\n", opts.Issue)
		}
		fmt.Fprintf(f.Stderr, "next: ralph's workflow starts on the label; without it, run `gh ralph advance %d`\n", opts.Issue)
		return nil
	}
	log := f.termLog()
	eng, err := s.engineFor(ctx, log, false, true)
	if err != nil {
		return err
	}
	res, err := eng.Handle(ctx, engine.Request{Action: engine.ActEnroll, Issue: opts.Issue, Actor: login})
	err = commandFailure(res, err)
	if opts.Exporter.enabled() {
		if werr := opts.Exporter.write(f.Stdout, opts.Exporter.pick(stepJSON(res, err)), f.StdoutTTY, f.Width); werr != nil && err == nil {
			return werr
		}
		return err
	}
	printResult(f.Stdout, f.StdoutTTY, colorizer(f.Color), res, err)
	return err
}
