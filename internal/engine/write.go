package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// setState makes `to` the issue's only state label, in one request that sets the issue's whole label list.
// The record's state is settle's to change.
func (e *Engine) setState(ctx context.Context, ic *issue, to workflow.State) error {
	labels := ic.gh.LabelNames()
	want := make([]string, 0, len(labels)+1)
	for _, l := range labels {
		if s, ok := workflow.StateFromLabel(l); !ok || s == to {
			want = append(want, l)
		}
	}
	if !slices.Contains(want, to.Label()) {
		want = append(want, to.Label())
	}
	if !slices.Equal(labels, want) {
		if err := e.GitHub.SetLabels(ctx, ic.n, want); err != nil {
			return fmt.Errorf("labeling #%d %s: %w", ic.n, to.Label(), err)
		}
		ic.gh.Labels = ic.gh.Labels[:0]
		for _, l := range want {
			ic.gh.Labels = append(ic.gh.Labels, ghapi.Label{Name: l})
		}
	}
	from := ic.state
	ic.state = to
	if e.OnState != nil && from != to {
		if err := e.OnState(ctx, ic.gh.NodeID, ic.n, to); err != nil {
			e.Log.Warnf("#%d: updating the project board: %v", ic.n, err)
		}
	}
	return nil
}

// write carries a settled run to GitHub: the other labels, the notices, then the status comment with the
// new record, then the state label. A crash between the last two leaves labels that the next run repairs
// from the record (see resolveState).
func (e *Engine) write(ctx context.Context, ic *issue, s settled) error {
	ic.rec = s.Record
	for _, l := range s.Labels {
		if err := e.toggleLabel(ctx, ic, l.Label, l.On); err != nil {
			return err
		}
	}
	for _, n := range s.Notices {
		if err := e.notice(ctx, ic, n.Key, n.Body); err != nil {
			return err
		}
	}
	if err := e.saveStatus(ctx, ic); err != nil {
		return err
	}
	e.checkpoint("after-status")
	if err := e.setState(ctx, ic, s.To); err != nil {
		return err
	}
	e.checkpoint("after-label")
	return nil
}

// notice posts a comment once: a repeated run (after a crash) finds it by its key and edits it instead.
func (e *Engine) notice(ctx context.Context, ic *issue, key, body string) error {
	_, err := e.upsertComment(ctx, ic, "<!-- ralph:notice "+key+" -->", body)
	return err
}

// upsertComment creates the comment that carries marker, or edits the one that does.
func (e *Engine) upsertComment(ctx context.Context, ic *issue, marker, body string) (ghapi.Comment, error) {
	body = sealed(body, marker)
	// Only a comment of ralph's own: anyone can post one that carries the marker.
	i, err := e.ownComment(ctx, ic, func(b string) bool { return carries(b, marker) })
	if err != nil {
		return ghapi.Comment{}, err
	}
	if i < 0 {
		return e.createComment(ctx, ic, func(b string) bool { return carries(b, marker) }, body)
	}
	if c := ic.comments[i]; c.Body == body {
		return c, nil
	}
	cm, err := e.GitHub.UpdateComment(ctx, ic.comments[i].ID, body)
	if err == nil {
		ic.comments[i] = cm
	}
	return cm, err
}

// sealed is a comment's body as ralph posts it: what it composed, in which nothing can pass for a marker,
// and then its one marker, at the fixed end. Sealing a sealed body changes nothing.
func sealed(content, marker string) string {
	content = strings.TrimSuffix(strings.TrimRight(content, " \t\r\n"), marker)
	return unmarked(strings.TrimRight(content, " \t\r\n")) + "\n\n" + marker
}

// carries says whether body is a comment that ralph sealed with marker: the marker is its end, where no
// quoted text can reach.
func carries(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), marker)
}

// isStatus says whether body is a status comment: ralph's marker starts it.
func isStatus(body string) bool { return strings.HasPrefix(body, StatusMarker) }

// createComment posts a comment that marked recognises as the one it posts. When the answer is an error,
// GitHub may have posted it all the same (a 502 after the write): ralph looks for it before it tries once
// more, so the comment is never there twice.
func (e *Engine) createComment(ctx context.Context, ic *issue, marked func(body string) bool, body string) (ghapi.Comment, error) {
	cm, err := e.GitHub.CreateComment(ctx, ic.n, body)
	if err != nil {
		if ctx.Err() != nil {
			return cm, err
		}
		comments, lerr := e.GitHub.Comments(ctx, ic.n)
		if lerr != nil {
			return cm, err
		}
		found := false
		for _, c := range comments {
			if !marked(c.Body) {
				continue
			}
			if own, aerr := e.authored(ctx, ic, c); aerr == nil && own {
				cm, found = c, true
			}
		}
		first := err
		if !found {
			if cm, err = e.GitHub.CreateComment(ctx, ic.n, body); err != nil {
				return cm, err
			}
		}
		e.Log.Warnf("#%d: posting a comment: %v (recovered)", ic.n, first)
	}
	ic.comments = append(ic.comments, cm)
	return cm, nil
}

// checkpoint marks a point between two writes; tests stop the process there to prove a rerun repairs it.
func (e *Engine) checkpoint(name string) {
	if e.Checkpoint != nil {
		e.Checkpoint(name)
	}
}

func (e *Engine) toggleLabel(ctx context.Context, ic *issue, label string, on bool) error {
	has := slices.Contains(ic.gh.LabelNames(), label)
	switch {
	case on && !has:
		if err := e.GitHub.AddLabels(ctx, ic.n, label); err != nil {
			return err
		}
		ic.gh.Labels = append(ic.gh.Labels, ghapi.Label{Name: label})
	case !on && has:
		if err := e.GitHub.RemoveLabel(ctx, ic.n, label); err != nil {
			return err
		}
		ic.gh.Labels = slices.DeleteFunc(ic.gh.Labels, func(l ghapi.Label) bool { return l.Name == label })
	}
	return nil
}

// flush writes what a run decided but no step recorded: the state label and the status comment of an issue
// enrolled by a run that then ran no step, and the note of labels repaired by a run that ran none.
func (e *Engine) flush(ctx context.Context, ic *issue) error {
	if st := workflow.StatesFromLabels(ic.gh.LabelNames()); len(st) != 1 || st[0] != ic.state {
		if err := e.setState(ctx, ic, ic.state); err != nil {
			return err
		}
	}
	if ic.status == nil || ic.repaired {
		return e.saveStatus(ctx, ic)
	}
	return nil
}
