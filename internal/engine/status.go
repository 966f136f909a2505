package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// saveStatus writes the one status comment: created on the first run, edited in place afterwards.
func (w *writer) saveStatus(ctx context.Context) error {
	return w.saveRecord(ctx, w.ic.rec)
}

// saveRecord writes rec as the status comment, whatever the record in this run is.
func (w *writer) saveRecord(ctx context.Context, rec Record) error {
	body, _ := fitStatus(w.steps, w.ic.n, rec, w.cfg, w.links(), Facts{Unowned: w.ic.unowned, Labeler: w.ic.labeler})
	if w.status != nil {
		if w.status.Body == body {
			return nil
		}
		cm, err := w.gh.UpdateComment(ctx, w.status.ID, body)
		if err != nil {
			return fmt.Errorf("updating the status comment of #%d: %w", w.ic.n, err)
		}
		w.status = &cm
		return nil
	}
	cm, err := w.createComment(ctx, record.IsStatus, body)
	if err != nil {
		return fmt.Errorf("creating the status comment of #%d: %w", w.ic.n, err)
	}
	w.status = &cm
	if cm.Body != body {
		// A status comment posted by this run's failed request, found again: bring it up to date.
		return w.saveRecord(ctx, rec)
	}
	return nil
}

// fitStatus renders the status comment of issue n with record rec, within what GitHub takes (record.Fit).
// f is what the run knows of the issue besides its record (Facts.Unowned).
func fitStatus(t *table, n int, rec Record, cfg config.Config, links Links, f Facts) (string, Record) {
	return record.Fit(rec, func(r Record) string { return t.RenderStatus(n, r, cfg, links, f) })
}

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
		if d := Next(n, ic.rec, true, Facts{Blockers: []int{}}, e.Config); d.Now() && !d.Running {
			if ic.unowned, ic.labeler, err = Unowned(ctx, lb, e.Auth, ic.gh, ic.people.answers); err != nil {
				return ic.rec, err
			}
		}
	}
	if e.DryRun {
		return ic.rec, nil
	}
	if err := ic.w.saveStatus(ctx); err != nil {
		return ic.rec, err
	}
	if reply && ic.w.status != nil {
		_, err = e.GitHub.CreateComment(ctx, n, fmt.Sprintf("ralph: #%d is **%s**. Details: %s", n, ic.state.Title(), ic.w.status.HTMLURL))
	}
	return ic.rec, err
}

func (w *writer) links() Links {
	l := Links{Run: w.runURL}
	if w.ic.rec.Branch != "" && w.ic.rec.Base != "" {
		l.Branch = w.gh.TreeURL(w.ic.rec.Branch)
	}
	if w.ic.rec.Docs != "" {
		l.Docs = w.gh.TreeURL(w.ic.rec.Docs)
	}
	return l
}
