package engine

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// writer writes what a run decided to GitHub, for one issue: ralph's comments (sealed, and found again by
// their markers, only among the comments ralph wrote), the labels, the status comment with the record, and
// the board.
type writer struct {
	ic     *issue
	gh     GitHub
	log    Logger
	cfg    config.Config
	runURL string
	// stop, when set, is called between two writes (Engine.Checkpoint).
	stop    func(name string)
	onState func(ctx context.Context, issueNodeID string, n int, to workflow.State) error
	steps   *table
}

func (e *Engine) writer(ic *issue) writer {
	return writer{ic: ic, gh: e.GitHub, log: e.Log, cfg: e.Config, runURL: e.Origin.URL, stop: e.Checkpoint, onState: e.OnState, steps: e.table()}
}
