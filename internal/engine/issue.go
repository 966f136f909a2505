package engine

import (
	"slices"

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
