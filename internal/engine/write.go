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

// setState makes `to` the only state label, in one request that sets the whole label list,
// which also adds or removes the other labels changes names (a step's needs-iteration). The record's
// state is settle's to change.
func (w *writer) setState(ctx context.Context, to workflow.State, changes ...labelChange) error {
	labels := w.ic.gh.LabelNames()
	want := make([]string, 0, len(labels)+1+len(changes))
	for _, l := range labels {
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
	if !slices.Equal(labels, want) {
		if err := w.gh.SetLabels(ctx, w.ic.n, want); err != nil {
			return fmt.Errorf("labeling #%d %s: %w", w.ic.n, to.Label(), err)
		}
		w.ic.gh.Labels = w.ic.gh.Labels[:0]
		for _, l := range want {
			w.ic.gh.Labels = append(w.ic.gh.Labels, ghapi.Label{Name: l})
		}
	}
	from := w.ic.state
	w.ic.state = to
	if w.onState != nil && from != to {
		if err := w.onState(ctx, w.ic.gh.NodeID, w.ic.n, to); err != nil {
			w.log.Warnf("#%d: updating the project board: %v", w.ic.n, err)
		}
	}
	return nil
}

// write carries a settled run to GitHub: the notices, then the status comment with the new record, then
// the labels (the state's and the others the step changes) in one request. A crash between the last two
// leaves labels that the next run repairs from the record (see resolveState).
func (w *writer) write(ctx context.Context, s settled) error {
	w.ic.rec = s.Record
	for _, n := range s.Notices {
		if err := w.notice(ctx, n.Key, n.Body); err != nil {
			return err
		}
	}
	if err := w.saveStatus(ctx); err != nil {
		return err
	}
	w.Checkpoint("after-status")
	if err := w.setState(ctx, s.To, s.Labels...); err != nil {
		return err
	}
	w.Checkpoint("after-label")
	return nil
}

// notice posts a comment once: a repeated run (after a crash) finds it by its key and edits it instead.
func (w *writer) notice(ctx context.Context, key, body string) error {
	_, err := w.UpsertComment(ctx, "<!-- ralph:notice "+key+" -->", body)
	return err
}

// upsertComment creates the comment that carries marker, or edits the one that does.
func (w *writer) UpsertComment(ctx context.Context, marker, body string) (ghapi.Comment, error) {
	body = record.Seal(body, marker)
	// Only a comment of ralph's own: anyone can post one that carries the marker.
	i, err := w.ic.people.OwnComment(ctx, w.comments, func(b string) bool { return record.Carries(b, marker) })
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
	cm, err := w.gh.CreateComment(ctx, w.ic.n, body)
	if err != nil {
		if ctx.Err() != nil {
			return cm, err
		}
		comments, lerr := w.gh.Comments(ctx, w.ic.n)
		if lerr != nil {
			return cm, err
		}
		found := false
		for _, c := range comments {
			if !marked(c.Body) {
				continue
			}
			if own, aerr := w.ic.people.Wrote(ctx, c.User); aerr == nil && own {
				cm, found = c, true
			}
		}
		first := err
		if !found {
			if cm, err = w.gh.CreateComment(ctx, w.ic.n, body); err != nil {
				return cm, err
			}
		}
		w.log.Warnf("#%d: posting a comment: %v (recovered)", w.ic.n, first)
	}
	w.comments = append(w.comments, cm)
	return cm, nil
}

// checkpoint marks a point between two writes; tests stop the process there to prove a rerun repairs it.
func (w *writer) Checkpoint(name string) {
	if w.stop != nil {
		w.stop(name)
	}
}

// flush writes what a run decided but no step recorded: the state label and the status comment of an issue
// enrolled by a run that then ran no step, and the note of labels repaired by a run that ran none.
func (w *writer) flush(ctx context.Context) error {
	if st := workflow.StatesFromLabels(w.ic.gh.LabelNames()); len(st) != 1 || st[0] != w.ic.state {
		if err := w.setState(ctx, w.ic.state); err != nil {
			return err
		}
	}
	if w.status == nil || w.ic.repaired {
		return w.saveStatus(ctx)
	}
	return nil
}

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
