package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// setState makes `to` the issue's only state label, in one request that sets the issue's whole label list,
// which also adds or removes the other labels changes names (a step's needs-iteration). It returns ic in
// state to. The record's state is settle's to change.
func (w *writer) setState(ctx context.Context, ic issue, to workflow.State, changes ...labelChange) (issue, error) {
	want := make([]string, 0, len(w.labels)+1+len(changes))
	for _, l := range w.labels {
		if s, ok := workflow.StateFromLabel(l); (!ok || s == to) && !slices.Contains(changes, labelChange{Label: l, On: false}) {
			want = append(want, l)
		}
	}
	if !slices.Contains(want, to.Label()) {
		want = append(want, to.Label())
	}
	for _, c := range changes {
		if c.On && !slices.Contains(want, c.Label) {
			want = append(want, c.Label)
		}
	}
	if !slices.Equal(w.labels, want) {
		if err := w.gh.SetLabels(ctx, w.n, want); err != nil {
			return ic, fmt.Errorf("labeling #%d %s: %w", w.n, to.Label(), err)
		}
		w.labels = want
	}
	if w.onState != nil && ic.state != to {
		if err := w.onState(ctx, w.nodeID, w.n, to); err != nil {
			w.log.Warnf("#%d: updating the project board: %v", w.n, err)
		}
	}
	ic.state = to
	return ic, nil
}

// write carries a settled run to GitHub: the notices, then the status comment with the new record, then
// the labels (the state's and the others the step changes) in one request. A crash between the last two
// leaves labels that the next run repairs from the record (see resolveState). It returns the issue as
// written: with the settled record from the moment the status comment holds it, and in the settled state
// once the labels show it.
func (w *writer) write(ctx context.Context, ic issue, s settled) (issue, error) {
	ic = ic.with(s.Record)
	for _, n := range s.Notices {
		if err := w.notice(ctx, n.Key, n.Body); err != nil {
			return ic, err
		}
	}
	if err := w.saveStatus(ctx, ic); err != nil {
		return ic, err
	}
	w.Checkpoint("after-status")
	ic, err := w.setState(ctx, ic, s.To, s.Labels...)
	if err != nil {
		return ic, err
	}
	w.Checkpoint("after-label")
	return ic, nil
}

// notice posts a comment once: a repeated run (after a crash) finds it by its key and edits it instead.
func (w *writer) notice(ctx context.Context, key, body string) error {
	_, err := w.UpsertComment(ctx, "<!-- ralph:notice "+key+" -->", body)
	return err
}

// UpsertComment creates the comment that carries marker, or edits the one that does.
func (w *writer) UpsertComment(ctx context.Context, marker, body string) (ghapi.Comment, error) {
	body = record.Seal(body, marker)
	// Only a comment of ralph's own: anyone can post one that carries the marker.
	i, err := w.people.OwnComment(ctx, w.comments, func(b string) bool { return record.Carries(b, marker) })
	if err != nil {
		return ghapi.Comment{}, err
	}
	if i < 0 {
		return w.createComment(ctx, func(b string) bool { return record.Carries(b, marker) }, body)
	}
	if c := w.comments[i]; c.Body == body {
		return c, nil
	}
	cm, err := w.gh.UpdateComment(ctx, w.comments[i].ID, body)
	if err == nil {
		w.comments[i] = cm
	}
	return cm, err
}

// createComment posts a comment that marked recognises as the one it posts. When the answer is an error,
// GitHub may have posted it all the same (a 502 after the write): ralph looks for it before it tries once
// more, so the comment is never there twice.
func (w *writer) createComment(ctx context.Context, marked func(body string) bool, body string) (ghapi.Comment, error) {
	cm, err := w.gh.CreateComment(ctx, w.n, body)
	if err != nil {
		if ctx.Err() != nil {
			return cm, err
		}
		comments, lerr := w.gh.Comments(ctx, w.n)
		if lerr != nil {
			return cm, err
		}
		found := false
		for _, c := range comments {
			if !marked(c.Body) {
				continue
			}
			if own, aerr := w.people.Wrote(ctx, c.User); aerr == nil && own {
				cm, found = c, true
			}
		}
		first := err
		if !found {
			if cm, err = w.gh.CreateComment(ctx, w.n, body); err != nil {
				return cm, err
			}
		}
		w.log.Warnf("#%d: posting a comment: %v (recovered)", w.n, first)
	}
	w.comments = append(w.comments, cm)
	return cm, nil
}

// Checkpoint marks a point between two writes; tests stop the process there to prove a rerun repairs it.
func (w *writer) Checkpoint(name string) {
	if w.stop != nil {
		w.stop(name)
	}
}

// flush writes what a run decided but no step recorded: the state label and the status comment of an issue
// enrolled by a run that then ran no step, and the note of labels repaired by a run that ran none. It
// returns the issue as written.
func (w *writer) flush(ctx context.Context, ic issue) (issue, error) {
	if !w.shows(ic.state) {
		var err error
		if ic, err = w.setState(ctx, ic, ic.state); err != nil {
			return ic, err
		}
	}
	if w.status == nil || ic.repaired {
		return ic, w.saveStatus(ctx, ic)
	}
	return ic, nil
}

// saveStatus writes the one status comment, with ic's record: created on the first run, edited in place
// afterwards.
func (w *writer) saveStatus(ctx context.Context, ic issue) error {
	return w.saveRecord(ctx, ic, ic.rec)
}

// saveRecord writes rec as issue ic's status comment, whatever ic's record is (the write-ahead's attempt,
// a mark for the next sweep).
func (w *writer) saveRecord(ctx context.Context, ic issue, rec Record) error {
	body, _ := fitStatus(w.steps, w.n, rec, w.cfg, w.links(rec), Facts{Unowned: ic.unowned, Labeler: ic.labeler})
	if w.status != nil {
		if w.status.Body == body {
			return nil
		}
		cm, err := w.gh.UpdateComment(ctx, w.status.ID, body)
		if err != nil {
			return fmt.Errorf("updating the status comment of #%d: %w", w.n, err)
		}
		w.status = &cm
		return nil
	}
	cm, err := w.createComment(ctx, record.IsStatus, body)
	if err != nil {
		return fmt.Errorf("creating the status comment of #%d: %w", w.n, err)
	}
	w.status = &cm
	if cm.Body != body {
		// A status comment posted by this run's failed request, found again: bring it up to date.
		return w.saveRecord(ctx, ic, rec)
	}
	return nil
}

// fitStatus renders the status comment of issue n with record rec, within what GitHub takes (record.Fit).
// f is what the run knows of the issue besides its record (Facts.Unowned).
func fitStatus(t *table, n int, rec Record, cfg config.Config, links Links, f Facts) (string, Record) {
	return record.Fit(rec, func(r Record) string { return t.RenderStatus(n, r, cfg, links, f) })
}

// links are the status comment's links for record rec: the run, the branch once it has a base, the
// documents' branch.
func (w *writer) links(rec Record) Links {
	l := Links{Run: w.runURL}
	if rec.Branch != "" && rec.Base != "" {
		l.Branch = w.gh.TreeURL(rec.Branch)
	}
	if rec.Docs != "" {
		l.Docs = w.gh.TreeURL(rec.Docs)
	}
	return l
}
