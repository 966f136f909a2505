package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// AdvanceOptions are `gh ralph advance`'s.
type AdvanceOptions struct {
	Repo   string
	Issue  int
	Until  workflow.State // "" : one step
	DryRun bool
	// PrintPrompt prints the prompt of the issue's next step and runs nothing.
	PrintPrompt bool
	Exporter    exporter
}

// NewCmdAdvance builds `gh ralph advance N [--until STATE] [--dry-run]`.
func NewCmdAdvance(f *Factory, runF func(context.Context, *AdvanceOptions) error) *cobra.Command {
	opts := &AdvanceOptions{}
	var until string
	cmd := &cobra.Command{
		Use:   "advance <issue>",
		Short: "Run the next step of an issue here, on this machine",
		Long: `Run the next step of an issue — exactly what the GitHub Action's run would do — on this
machine: research, plan, review, one implementation phase, the pull request, or the merge check.

` + whereText + ` ralph reads .github/ralph.yml (and
.github/ralph/prompts/) of your checkout, checks that the agent can run (its CLI, its API key: gh
ralph doctor says more), runs it with its output shown here (with the elapsed time on a terminal),
commits as your git identity, pushes the issue's branch, and records the step on the issue.

ralph reads its config and prompts only as the default branch holds them, with your uncommitted
edits: when the checked-out HEAD's own commits change them (a contributor's pull request checked
out with gh pr checkout, say), advance refuses before it touches the issue, since that config could
run a program as you or send your model key elsewhere. Check out the default branch first.

With --until, it keeps going step after step until the issue reaches STATE or stops at a gate
(a person is needed: plan review in interactive mode, the open pull request, Human Needed).
Ctrl-C stops the agent and exits with status 130.

It takes the same per-issue lock on GitHub as the Action (the ref refs/ralph/locks/<issue>): when
an Actions run or another gh ralph holds the issue, advance says who and does nothing.

` + stepColumns + ` The JSON is a list: one object per step run.`,
		Example: `  # the next step of issue 47
  $ gh ralph advance 47

  # keep going until the pull request is open (or a person is needed)
  $ gh ralph advance 47 --until in-review

  # say what would run, change nothing
  $ gh ralph advance 47 --dry-run

  # print the prompt the agent would get for the next step (to tune .github/ralph/prompts/)
  $ gh ralph advance 47 --print-prompt

  # the state each step left the issue in, for a script
  $ gh ralph advance 47 --until in-review --json step,state,outcome --jq '.[-1].state'`,
		Args:              issueArg,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if until != "" {
				s, ok := parseState(until)
				if !ok {
					return flagErrorf(cmd, "unknown state %q for --until; use one of: %s", until, stateNames())
				}
				opts.Until = s
			}
			if opts.PrintPrompt && (opts.Until != "" || opts.DryRun) {
				return flagErrorf(cmd, "--print-prompt runs nothing; it cannot be combined with --until or --dry-run")
			}
			if err := opts.Exporter.check(cmd, stepFields); err != nil {
				return err
			}
			if opts.PrintPrompt && opts.Exporter.enabled() {
				return flagErrorf(cmd, "--print-prompt prints a prompt, not JSON; it cannot be combined with --json")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.PrintPrompt {
				return printPromptRun(cmd.Context(), f, opts)
			}
			return advanceRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "Keep advancing until the issue reaches `STATE` (or a gate)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "Say what would run; change nothing")
	cmd.Flags().BoolVar(&opts.PrintPrompt, "print-prompt", false, "Print the prompt of the next step (the repository's template or the built-in one); run nothing")
	_ = cmd.RegisterFlagCompletionFunc("until", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, s := range workflow.States() {
			names = append(names, string(s)+"\t"+s.Title())
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	addJSONFlags(cmd, &opts.Exporter, stepFields)
	addRepoFlag(cmd)
	return cmd
}

// parseState reads a state as its name ("in-review"), its label ("ralph:in-review") or its title ("In Review").
func parseState(s string) (workflow.State, bool) {
	s = strings.TrimSpace(s)
	if st, ok := workflow.StateFromLabel(s); ok {
		return st, true
	}
	for _, st := range workflow.States() {
		if strings.EqualFold(s, string(st)) || strings.EqualFold(s, st.Title()) {
			return st, true
		}
	}
	return "", false
}

func stateNames() string {
	var names []string
	for _, s := range workflow.States() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// maxLoop bounds --until: a plan sent back and forth cannot exceed it before max_iterations stops it.
const maxLoop = 100

func advanceRun(ctx context.Context, f *Factory, opts *AdvanceOptions) error {
	out := &stepOutput{f: f, exp: &opts.Exporter}
	return out.flush(advanceSteps(ctx, f, opts, out))
}

func advanceSteps(ctx context.Context, f *Factory, opts *AdvanceOptions, out *stepOutput) error {
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	defer s.release()
	// The token, with one read, before git meets it: git says only that it cannot ask for a user name.
	if _, err := s.gh.Repository(ctx); err != nil {
		return fmt.Errorf("checking %s: %w", s.fullName(), err)
	}
	log := f.termLog()
	log.interrupted = func() bool { return ctx.Err() != nil }
	eng, err := s.engineFor(ctx, log, opts.DryRun, true)
	if err != nil {
		return err
	}
	// No chain follows a step taken here: the status comment says so when no sweep would take the issue.
	eng.Labeler = func(ctx context.Context, is ghapi.Issue) (bool, string, error) {
		return engine.Unowned(ctx, s.gh, eng.Auth, is, nil)
	}
	if !opts.DryRun {
		// Before the issue is locked or changed: a missing CLI or API key, or a boundary that cannot be
		// set up, is said here and counts no failure.
		info, err := doctor.Start(ctx, eng.Config, f.Environ(), eng.Sandbox, nil, doctor.Here)
		if err != nil {
			return err
		}
		var boundary []string
		for _, line := range info {
			if compose.BoundaryLine(line) {
				boundary = append(boundary, line) // said when the agent first runs
				continue
			}
			log.Infof("%s", line)
		}
		eng.Agent = compose.Announced(eng.Agent, log.Infof, boundary)
	} else if eng.AgentErr != nil {
		log.Warnf("%v", eng.AgentErr)
	}
	for i := 0; i < maxLoop; i++ {
		res, err := eng.Handle(ctx, engine.Request{Action: engine.ActAdvance, Issue: opts.Issue})
		out.add(res, err)
		printUsage(f.Stderr, res)
		printRefused(f.Stderr, res)
		if err != nil && ctx.Err() != nil {
			return &InterruptedError{Err: err, Issue: opts.Issue}
		}
		if err := stepFailure(opts.Issue, res, err); err != nil {
			return err
		}
		switch {
		case opts.Until == "":
			return nil
		case res.State == opts.Until:
			return nil
		case opts.DryRun:
			return nil
		case res.Held, res.Paused, !res.Continue, res.Step == "":
			// Not where it was asked to go: a gate (a person's turn), a hold or nothing to do. A script
			// that waits for --until learns it from the exit status.
			fmt.Fprintf(f.Stderr, "#%d stopped at %s before reaching %s\n", res.Issue, res.State.Title(), opts.Until.Title())
			return &silentExit{code: ExitError}
		}
	}
	return fmt.Errorf("#%d did not reach %s in %d steps", opts.Issue, opts.Until.Title(), maxLoop)
}

// stepFailure is how gh ralph advance says that the step of issue n failed (err), from its Result: a failure
// recorded on the issue (Result.Recorded: its status comment says what comes next, and where the issue
// now is decides the command that goes on), GitHub failing for a while (engine.Transient: a rerun goes
// on), or any other error as it is. nil when err is.
func stepFailure(n int, res engine.Result, err error) error {
	switch {
	case err == nil:
		return nil
	case res.Recorded:
		return &failedStepError{Issue: n, State: res.State, Err: err}
	case engine.Transient(err):
		return &transientError{Issue: n, Err: err}
	}
	return err
}

// printResult writes one line per step: for people on a terminal, tab-separated fields otherwise
// (issue, step, from, to, outcome, pull request, message).
func printResult(w io.Writer, tty bool, c colorizer, res engine.Result, err error) {
	outcome := stepOutcome(res, err)
	// An error is said once, by Exit on stderr (with what to do): the line only marks the step failed. The
	// message may quote what others wrote (a phase's title, a reason): it is printed inert.
	msg := inert.String(oneLine(res.Message))
	if !tty {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Issue, res.Step, res.From, res.State, outcome, res.PRURL, msg)
		return
	}
	mark := map[string]string{"done": "✓", "failed": "✗", "waiting": "⏸", "held": "…", "nothing": "·", "dry-run": "?", "budget": "$"}[outcome]
	step := string(res.Step)
	if step == "" {
		step = "no step"
	}
	// The states once: a transition with its arrow, a state that stayed as it was without one.
	states := titleOr(res.State)
	if res.From != res.State {
		states = titleOr(res.From) + " → " + states
	}
	line := fmt.Sprintf("%s #%d %s: %s", mark, res.Issue, step, states)
	if msg != "" && msg != step+": "+states {
		line += " — " + msg
	}
	fmt.Fprintln(w, c.marked(line))
	if res.PRURL != "" && res.State == workflow.InReview {
		fmt.Fprintf(w, "  pull request: %s\n", res.PRURL)
	}
}

func titleOr(s workflow.State) string {
	if s == "" {
		return "not enrolled"
	}
	return s.Title()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
