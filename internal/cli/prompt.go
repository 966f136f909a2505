package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// printPromptRun prints the prompt the agent would get for the issue's next step: the data to stdout,
// where it came from to stderr.
func printPromptRun(ctx context.Context, f *Factory, opts *AdvanceOptions) error {
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	defer s.release()
	log := f.termLog()
	log.interrupted = func() bool { return ctx.Err() != nil }
	eng, err := s.engineFor(ctx, log, true, false)
	if err != nil {
		return err
	}
	command, source, prompt, err := eng.NextPrompt(ctx, opts.Issue)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Stderr, "the %s prompt for #%d, from %s:\n", command, opts.Issue, source)
	// The prompt quotes the issue's text and people's comments (a carriage return of a body is kept for
	// the agent): what reaches the terminal is inert.
	_, err = io.WriteString(f.Stdout, inert.String(prompt))
	return err
}

// printRefused says which hosts ralph's network proxy refused the step's agent, each once, and the config
// line that would allow them. The agent chose them: nothing of them reaches the terminal as a control.
func printRefused(w io.Writer, res engine.Result) {
	for _, line := range record.RefusedLines(res.Refused) {
		fmt.Fprintf(w, "#%d: %s\n", res.Issue, inert.String(line))
	}
}

// printUsage says on stderr what the agent has cost the issue so far; the step's own usage is in the
// engine's log already, and when it is the whole total (the issue's first step), nothing is said twice.
func printUsage(w io.Writer, res engine.Result) {
	if res.Total == nil || res.Usage != nil && *res.Total == *res.Usage {
		return
	}
	fmt.Fprintf(w, "#%d so far: %s\n", res.Issue, res.Total)
}
