package compose

import (
	"context"
	"strings"
	"sync"

	"github.com/ralph-dev/gh-ralph/internal/agent"
)

// BoundaryLine says whether a line of doctor.Start's is the agent's boundary ("the agent runs as …"): long,
// and about the agent only, so a door says it when the agent first runs (Announced), not in a run where no
// agent runs.
func BoundaryLine(line string) bool { return strings.HasPrefix(line, "the agent runs as ") }

// Announced is r that logs lines with logf once, just before the agent first runs: in a run that takes no
// step of the agent's (a gate, a merge, a command that only records), they are not said. nil stays nil.
func Announced(r agent.Runner, logf func(format string, args ...any), lines []string) agent.Runner {
	if r == nil || len(lines) == 0 {
		return r
	}
	return &announced{Runner: r, logf: logf, lines: lines}
}

type announced struct {
	agent.Runner
	logf  func(format string, args ...any)
	lines []string
	once  sync.Once
}

func (a *announced) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	a.once.Do(func() {
		for _, l := range a.lines {
			a.logf("%s", l)
		}
	})
	return a.Runner.Run(ctx, inv)
}
