package engine

import (
	"context"
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// issue is one issue as a run holds it: a value. The read makes it (reader.load), and each stage after it
// that changes the issue returns the issue it made (enroll, begin, the writer's setState and write, flush);
// the run goes on with the value returned. No stage keeps or receives a pointer to it, so a value a stage
// read is the value it was given, whatever was written since. Its record's pointers and slices are shared
// between copies: a stage changes a record only on a Clone of it.
type issue struct {
	n  int
	gh ghapi.Issue // as GitHub gave it when the run read it; the labels as they stand since are the writer's
	// w and people are the issue's services, not its data: one writer and one people per issue a run reads.
	w        *writer
	people   *people          // who this run asked may drive ralph, and their answers (one per run)
	rec      Record           // the record, as last read or written
	state    workflow.State   // from the record ("" = not enrolled); the labels are repaired to it
	stray    []workflow.State // state labels on an issue ralph holds no record of
	repaired bool             // the labels disagreed with the record and were put back (rec.Repair says how)
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
func (ic issue) enrollable() bool {
	return slices.Contains(ic.gh.LabelNames(), workflow.LabelBuild)
}

// in is the issue in state to, its record's state to as well.
func (ic issue) in(to workflow.State) issue {
	ic.state = to
	return ic.edited(func(rec *Record) { rec.State = to })
}

// edited is the issue with its record changed by change, on a copy: the record's maps, slices and
// pointers are shared by every copy of the issue, so this is how a stage changes a record it was given.
func (ic issue) edited(change func(rec *Record)) issue {
	rec := ic.rec.Clone()
	change(&rec)
	ic.rec = rec
	return ic
}

// with is the issue with record rec.
func (ic issue) with(rec Record) issue {
	ic.rec = rec
	return ic
}

// writer writes what a run decided to GitHub, for one issue: ralph's comments (sealed, and found again by
// their markers, only among the comments ralph wrote), the labels, the status comment with the record, and
// the board. It keeps no issue: each write that moves the issue is given the issue and returns it as
// written. What it keeps is its cache of what GitHub holds, which it alone changes.
type writer struct {
	n      int
	nodeID string  // the issue's, for the board
	people *people // who wrote a comment: only ralph's own are found again
	// comments are the issue's comments as the run read them and the writer wrote them since; status is
	// ralph's status comment among them, nil until there is one; labels are the issue's labels as read and
	// as the writer set them since.
	comments []ghapi.Comment
	status   *ghapi.Comment
	labels   []string

	gh     GitHub
	log    Logger
	cfg    config.Config
	runURL string
	// stop, when set, is called between two writes (Engine.Checkpoint).
	stop    func(name string)
	onState func(ctx context.Context, issueNodeID string, n int, to workflow.State) error
	steps   *table
}

// newWriter makes the one writer of issue n, which the run has just read (reader.load: gi, its comments
// and ralph's status comment among them, nil when there is none).
func (e *Engine) newWriter(n int, gi ghapi.Issue, ppl *people, comments []ghapi.Comment, status *ghapi.Comment) *writer {
	return &writer{n: n, nodeID: gi.NodeID, people: ppl, comments: comments, status: status, labels: gi.LabelNames(),
		gh: e.GitHub, log: e.Log, cfg: e.Config, runURL: e.Origin.URL, stop: e.Checkpoint, onState: e.OnState, steps: e.table()}
}

// Comments are the issue's comments as the run read them and the writer wrote them since.
func (w *writer) Comments() []ghapi.Comment { return w.comments }

// Status is ralph's status comment among them, nil until there is one.
func (w *writer) Status() *ghapi.Comment { return w.status }

// shows says whether the issue's labels show state st, and no other.
func (w *writer) shows(st workflow.State) bool {
	s := workflow.StatesFromLabels(w.labels)
	return len(s) == 1 && s[0] == st
}
