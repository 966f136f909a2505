// Command gh-ralph is ralph: the `gh ralph` extension and, as `gh-ralph action`, the GitHub Action.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cli/go-gh/v2/pkg/term"

	"github.com/ralph-dev/gh-ralph/internal/action"
	"github.com/ralph-dev/gh-ralph/internal/cli"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// version and commit are stamped at build time with -ldflags "-X main.version=… -X main.commit=…"
// (script/build.sh for releases, the Dockerfile for the Action's image); a build without them reads
// what Go recorded of the module and its commit (buildinfo.go).
var (
	version = ""
	commit  = ""
)

func main() {
	// The supervisor of a confined agent is this same binary, started by ralph with a hidden argument.
	if len(os.Args) > 1 && os.Args[1] == sandbox.SupervisorCommand {
		os.Exit(sandbox.SupervisorMain(os.Args[2:]))
	}
	os.Exit(run())
}

func run() int {
	// First, before any agent runs: one running as the same user must not read ralph's memory.
	if err := sandbox.Prepare(); err != nil {
		fmt.Fprintf(os.Stderr, "warning: protecting ralph from the agent: %v\n", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := term.FromEnv()
	width, _, _ := t.Size()
	v, c := buildVersion(version, commit)
	f := &cli.Factory{
		Getenv: os.Getenv, Environ: os.Environ, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Version: v, Commit: c,
		StdinTTY: term.IsTerminal(os.Stdin), StdoutTTY: t.IsTerminalOutput(), StderrTTY: term.IsTerminal(os.Stderr) || term.IsColorForced(),
		Color: t.IsColorEnabled(), ErrColor: term.IsColorForced() || term.IsTerminal(os.Stderr) && !term.IsColorDisabled(), Width: width,
		RunAction: func(ctx context.Context, getenv func(string) string, environ []string, stdout io.Writer) error {
			return action.Run(ctx, action.Env{Getenv: getenv, Environ: environ, Stdout: stdout})
		},
	}
	return cli.Exit(cli.Execute(ctx, f, nil), os.Stderr)
}
