// Package cli is ralph's command-line door: the cobra commands of `gh ralph`, and `gh-ralph action`, the
// GitHub Action's entry point. Errors become exit codes and hints in one place, Exit.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/action"
)

// Factory holds what commands need from the process, so tests can give their own.
type Factory struct {
	Getenv  func(string) string
	Environ func() []string
	Stdout  io.Writer
	Stderr  io.Writer
	Version string
}

// NewCmdRoot builds the `gh ralph` command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "gh ralph <command>",
		Short: "Drive GitHub issues through research, plan, review, implementation and a pull request with an AI agent",
		Long: `ralph takes a GitHub issue from "someone labeled it" to "a reviewed pull request is open" by
driving an AI coding agent through a fixed, visible workflow: research → plan → plan review →
implementation in phases on a branch → self-review → pull request → merge.

Every run advances one issue by one step and records everything on GitHub: a state label, one
status comment, artifact comments, a branch and a pull request.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       f.Version,
	}
	root.SetOut(f.Stdout)
	root.SetErr(f.Stderr)
	root.AddCommand(NewCmdAction(f, nil))
	return root
}

// ActionOptions are the `action` command's options (it has no flags: the Action passes INPUT_* variables).
type ActionOptions struct {
	Env action.Env
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Env = action.Env{Getenv: f.Getenv, Environ: f.Environ(), Stdout: f.Stdout}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return action.Run(cmd.Context(), opts.Env)
		},
	}
}

// Exit maps an error to an exit code, printing it (with a hint where there is one) unless the command
// already reported it.
func Exit(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ex *action.ExitError
	if errors.As(err, &ex) {
		return ex.Code
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return 1
}
