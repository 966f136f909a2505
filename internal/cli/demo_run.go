//go:build !nodemo

package cli

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/demo"
)

func demoRun(ctx context.Context, f *Factory) error {
	log := f.termLog()
	log.interrupted = func() bool { return ctx.Err() != nil }
	return demo.Run(ctx, f.Stdout, termWriter{log})
}
