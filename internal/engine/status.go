package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Status refreshes the status comment and answers with a short reply pointing at it.
func (e *Engine) Status(ctx context.Context, n int, reply bool) (Record, error) {
	ic, err := e.reader().load(ctx, n, "")
	if err != nil {
		return Record{}, err
	}
	if ic.state == "" {
		return Record{}, inputErrorf("#%d is not enrolled: add the %s label to start", n, workflow.LabelBuild)
	}
	// Who added ralph:build matters when a step could run now: no sweep takes an issue whose label counts
	// for nobody, and the comment must not say ralph goes on by itself.
	if lb, ok := e.GitHub.(LabelerReader); ok && ic.enrollable() && ic.gh.State == "open" {
		if d := e.table().Next(n, ic.rec, true, Facts{Blockers: []int{}}, e.Config); d.Now() && !d.Running {
			if ic.unowned, ic.labeler, err = Unowned(ctx, lb, e.Auth, ic.gh, ic.people.answers); err != nil {
				return ic.rec, err
			}
		}
	}
	if e.DryRun {
		return ic.rec, nil
	}
	if err := ic.w.saveStatus(ctx, ic); err != nil {
		return ic.rec, err
	}
	if st := ic.w.Status(); reply && st != nil {
		_, err = e.GitHub.CreateComment(ctx, n, fmt.Sprintf("ralph: #%d is **%s**. Details: %s", n, ic.state.Title(), st.HTMLURL))
	}
	return ic.rec, err
}
