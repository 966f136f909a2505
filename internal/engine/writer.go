package engine

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// writer writes what a run decided to GitHub, for one issue: ralph's comments (sealed, and found again by
// their markers, only among the comments ralph wrote), the labels, the status comment with the record, and
// the board.
type writer struct {
	ic *issue // its number, labels, state and record, which the writes move
	// comments are the issue's comments as the run read them and the writer wrote them since; status is
	// ralph's status comment among them, nil until there is one. The writer alone changes them.
	comments []ghapi.Comment
	status   *ghapi.Comment

	gh     GitHub
	log    Logger
	cfg    config.Config
	runURL string
	// stop, when set, is called between two writes (Engine.Checkpoint).
	stop    func(name string)
	onState func(ctx context.Context, issueNodeID string, n int, to workflow.State) error
	steps   *table
}

// newWriter makes the one writer of an issue the run has just read (reader.load), with its comments.
func (e *Engine) newWriter(ic *issue, comments []ghapi.Comment) *writer {
	return &writer{comments: comments, ic: ic, gh: e.GitHub, log: e.Log, cfg: e.Config, runURL: e.Origin.URL, stop: e.Checkpoint, onState: e.OnState, steps: e.table()}
}

// Comments are the issue's comments as the run read them and the writer wrote them since.
func (w *writer) Comments() []ghapi.Comment { return w.comments }

// Status is ralph's status comment among them, nil until there is one.
func (w *writer) Status() *ghapi.Comment { return w.status }
