// Command gh-ralph is ralph: the `gh ralph` extension and, as `gh-ralph action`, the GitHub Action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

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
	f := &cli.Factory{Getenv: os.Getenv, Environ: os.Environ, Stdout: os.Stdout, Stderr: os.Stderr, Version: version}
	return cli.Exit(cli.NewCmdRoot(f).ExecuteContext(ctx), os.Stderr)
}
