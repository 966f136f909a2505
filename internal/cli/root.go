// Package cli is ralph's command-line door: the cobra commands of `gh ralph`, and `gh-ralph action`, the
// GitHub Action's entry point. Errors become exit codes and hints in one place, Exit.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/repository"
	"github.com/spf13/cobra"
)

// Factory holds what commands need from the process, so tests can give their own.
type Factory struct {
	Getenv  func(string) string
	Environ func() []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// Version is ralph's version and Commit the commit it was built from ("" when unknown), both
	// stamped at build time.
	Version, Commit string

	// StdoutTTY and StderrTTY say whether the streams are terminals: tables and colour on stdout, the
	// progress line on stderr. Color enables colour on stdout and ErrColor on stderr (neither off a
	// terminal nor with NO_COLOR); Width is the terminal's width (0: 80).
	StdinTTY, StdoutTTY, StderrTTY, Color, ErrColor bool
	Width                                           int
	// Dir is the working directory, the user's checkout; "" is the process's.
	Dir string
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	// The seams to gh's own resolution, which reads the process environment and gh's config files (go-gh
	// offers no getenv hook for them). Environment variables are read through Getenv first; these are
	// consulted only for what the environment does not say. nil: go-gh's.
	//
	// RepoFromRemotes picks the repository from the git remotes of the current directory.
	RepoFromRemotes func() (repository.Repository, error)
	// StoredToken is gh's stored login for host (config file or keyring).
	StoredToken func(host string) string
	// ConfiguredHost is the one host gh is logged in to, or "" when it is not exactly one.
	ConfiguredHost func() string
	// RunGH runs gh with args, on the process's standard streams (gh secret set asks for the secret
	// there); nil: the gh that runs this extension (GH_PATH), else gh on PATH.
	RunGH func(ctx context.Context, args ...string) error
	// RunAction runs the GitHub Action's door (`gh-ralph action`) on this environment and standard output;
	// main gives it, so that this door does not depend on the other. An error it returns that has an
	// ExitStatus was reported already (see Exit).
	RunAction func(ctx context.Context, getenv func(string) string, environ []string, stdout io.Writer) error
}

func (f *Factory) stdin() io.Reader {
	if f.Stdin == nil {
		return strings.NewReader("")
	}
	return f.Stdin
}

func (f *Factory) runGH(ctx context.Context, args ...string) error {
	if f.RunGH != nil {
		return f.RunGH(ctx, args...)
	}
	gh := f.Getenv("GH_PATH")
	if gh == "" {
		p, err := exec.LookPath("gh")
		if err != nil {
			return fmt.Errorf("gh is not installed: %w", err)
		}
		gh = p
	}
	cmd := exec.CommandContext(ctx, gh, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f.stdin(), f.Stdout, f.Stderr
	return cmd.Run()
}

func (f *Factory) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// whereText says where gh ralph works, in the words of every help text that says it (and the README's).
const whereText = `ralph keeps its own git repository in your cache directory
(~/.cache/ralph/<repo>-<id>/git on Linux) and gives the agent a copy of the issue's branch
next to it (agents/<issue>, removed when the step ends): your checkout, its branch and your
uncommitted changes are never touched.`

// NewCmdRoot builds the `gh ralph` command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		// The binary is gh-ralph; people type `gh ralph`, which is how help shows it.
		Use:         "gh-ralph <command>",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "gh ralph"},
		Short:       "Drive GitHub issues through research, plan, review, implementation and a pull request with an AI agent",
		Long: `ralph takes a GitHub issue from "someone labeled it" to "a reviewed pull request is open" by
driving an AI coding agent through a fixed, visible workflow: research → plan → plan review →
implementation in phases on a branch → self-review → pull request → merge.

Every run advances one issue by one step and records everything on GitHub: a state label, one
status comment, artifact comments, a branch and a pull request. gh ralph runs the same steps as
the GitHub Action, here: ` + whereText + `

Start with gh ralph init (the workflow, the config, the labels, the agent's secret), then
gh ralph doctor (what is still missing, and what to do).

The repository is the one of the current directory (its git remotes), GH_REPO, or -R; the host
and token are found as gh finds them (GH_HOST, GH_TOKEN, GH_ENTERPRISE_TOKEN, gh auth login).`,
		Example: `  $ gh ralph init
  $ gh ralph doctor
  $ gh ralph enroll 47
  $ gh ralph advance 47 --until in-review
  $ gh ralph status
  $ gh ralph status 47 --json state,phase,pullRequest`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       f.Version,
	}
	root.SetVersionTemplate(versionText(f.Version, f.Commit))
	root.SetOut(f.Stdout)
	root.SetErr(f.Stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &FlagError{Err: err, Usage: shortUsage(cmd)}
	})
	root.AddCommand(
		NewCmdAdvance(f, nil),
		NewCmdStatus(f, nil),
		NewCmdEnroll(f, nil),
		NewCmdApprove(f, nil),
		NewCmdReject(f, nil),
		NewCmdRetry(f, nil),
		NewCmdFix(f, nil),
		NewCmdSweep(f, nil),
		NewCmdInit(f, nil),
		NewCmdDoctor(f, nil),
		NewCmdVersion(f),
		NewCmdDemo(f),
		NewCmdAction(f, nil),
	)
	setUpCompletion(root)
	return root
}

// addRepoFlag gives cmd -R, as gh gives it to each command that works on a repository (and not to
// demo, version, completion or help, which do not).
func addRepoFlag(cmd *cobra.Command) {
	cmd.Flags().StringP("repo", "R", "", "Select another repository using the `[HOST/]OWNER/REPO` format")
}

// Execute runs the command line args (nil: the process's) and returns what Exit maps to an exit code. An
// error after ctx was cancelled (Ctrl-C) is an interruption, whatever the step made of it.
func Execute(ctx context.Context, f *Factory, args []string) error {
	root := NewCmdRoot(f)
	if args != nil {
		root.SetArgs(args)
	}
	err := root.ExecuteContext(ctx)
	var intr *InterruptedError
	if err != nil && ctx.Err() != nil && !errors.As(err, &intr) {
		return &InterruptedError{Err: err}
	}
	var flagErr *FlagError
	if err != nil && isUnknownCommand(err) && !errors.As(err, &flagErr) {
		// An unknown command: the commands there are (the root's usage lists them). An unknown flag of a
		// command is that command's usage error already (SetFlagErrorFunc), and keeps its usage.
		return &FlagError{Err: err, Usage: root.UsageString()}
	}
	return err
}

// ActionOptions are the `action` command's options (it has no flags: the Action passes INPUT_* variables).
type ActionOptions struct {
	Getenv  func(string) string
	Environ []string
	Stdout  io.Writer
}

// NewCmdAction builds `gh-ralph action`, the entry point of the GitHub Action's container.
func NewCmdAction(f *Factory, runF func(context.Context, *ActionOptions) error) *cobra.Command {
	opts := &ActionOptions{}
	return &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action (the container's entry point)",
		Long: `Run one step as the GitHub Action: read the INPUT_* variables (token, issue, command, config,
dry_run) and the event GitHub Actions started the run with, advance the issue, and write the
outputs and the step summary.

This is what the action's container runs; you do not normally run it yourself.`,
		Example: `  $ GITHUB_REPOSITORY=owner/repo GITHUB_WORKSPACE=$PWD INPUT_TOKEN=$(gh auth token) INPUT_ISSUE=12 INPUT_DRY_RUN=true gh-ralph action`,
		Args:    noArgs,
		Hidden:  false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Getenv, opts.Environ, opts.Stdout = f.Getenv, f.Environ(), f.Stdout
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if f.RunAction == nil {
				return errors.New("this build of gh-ralph cannot run as the GitHub Action")
			}
			return f.RunAction(cmd.Context(), opts.Getenv, opts.Environ, opts.Stdout)
		},
	}
}

// versionText is what gh ralph version prints, as gh version does: the version (with the commit it was
// built from, when known) and the release's page.
func versionText(version, commit string) string {
	v := strings.TrimPrefix(version, "v")
	line := "gh ralph version " + v
	if len(commit) >= 7 {
		line += " (commit " + commit[:7] + ")"
	}
	switch {
	case isRelease(v):
		line += "\nhttps://github.com/ralph-dev/gh-ralph/releases/tag/v" + v + "\n"
	case v != "dev" && v != "":
		line += ", not a release\n"
	default:
		line += "\n"
	}
	return line
}

// pseudoVersion is what Go stamps a build made in a clone past a tag (v1.0.1-0.20261125120000-abcdefabcdef)
// or with changes (+dirty): no release has that version.
var pseudoVersion = regexp.MustCompile(`(^|[-.])\d{14}-[0-9a-f]{12}($|\+)|\+`)

// isRelease says whether v (without its v) is the version of a release: not dev, no pseudo-version.
func isRelease(v string) bool {
	return v != "" && v != "dev" && !pseudoVersion.MatchString(v)
}

// NewCmdVersion builds `gh ralph version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show gh ralph's version",
		Long: `Show gh ralph's version and the commit it was built from, as stamped when it was built (a release,
the Action's image, or go install at a version); dev for a build that was not stamped.`,
		Example: `  $ gh ralph version
  $ gh ralph --version`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(f.Stdout, versionText(f.Version, f.Commit))
			return err
		},
	}
}
