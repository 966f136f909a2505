package engine

import (
	"context"
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// issue is everything a run reads of one issue before it acts.
type issue struct {
	n        int
	gh       ghapi.Issue
	w        *writer // the issue's one writer, which keeps its comments and ralph's status comment
	rec      Record
	state    workflow.State   // from the record ("" = not enrolled); the labels are repaired to it
	stray    []workflow.State // state labels on an issue ralph holds no record of
	repaired bool             // the labels disagreed with the record and were put back (rec.Repair says how)
	people   *people          // who this run asked may drive ralph, and their answers (one per run)
	takeover string           // the stale lock holder this run took over from
	// unrecorded is the attempt of an earlier run whose outcome was never recorded.
	unrecorded *Attempt
	// unowned: ralph:build counts for nobody (Unowned; labeler added it), as far as this run asked (only
	// a refresh of the status comment asks): the comment then says the issue waits for a writer.
	unowned bool
	labeler string
}

// enrollable says whether an issue ralph holds no record of may be enrolled: it carries ralph:build. A state
// label alone enrolls nothing.
func (ic *issue) enrollable() bool {
	return slices.Contains(ic.gh.LabelNames(), workflow.LabelBuild)
}

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
