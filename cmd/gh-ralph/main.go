// Command gh-ralph is ralph: the `gh ralph` extension and, as `gh-ralph action`, the GitHub Action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cli/go-gh/v2/pkg/term"

	"github.com/ralph-dev/gh-ralph/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := term.FromEnv()
	width, _, _ := t.Size()
	f := &cli.Factory{
		Getenv: os.Getenv, Environ: os.Environ, Stdout: os.Stdout, Stderr: os.Stderr, Version: version,
		StdoutTTY: t.IsTerminalOutput(), StderrTTY: term.IsTerminal(os.Stderr) || term.IsColorForced(),
		Color: t.IsColorEnabled(), Width: width,
	}
	return cli.Exit(cli.Execute(ctx, f, nil), os.Stderr)
}
