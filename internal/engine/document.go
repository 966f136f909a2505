package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// writeDoc runs a document step's agent and returns the document it wrote.
func (r *runner) writeDoc(ctx context.Context, ws *workspace.Workspace, command, rel string, d prompts.Data) (string, error) {
	if err := ws.Clear(rel); err != nil {
		return "", err
	}
	abs := filepath.Join(ws.Dir, filepath.FromSlash(rel))
	d.Artifact = abs
	if err := r.runAgent(ctx, ws, command, abs, 0, 0, d); err != nil {
		var be *session.BudgetError
		if errors.As(err, &be) && !be.Before {
			// Stopped at a budget: what the agent wrote so far is kept (document).
			if b, derr := ws.Document(rel); derr == nil && strings.TrimSpace(string(b)) != "" {
				return string(b), err
			}
			be.Kept = "The agent had written no document; nothing was committed."
		}
		return "", err
	}
	b, err := ws.Document(rel)
	if err != nil {
		return "", documentError(command, rel, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", &StepError{Step: command, Reason: fmt.Sprintf("the document at %s is empty", rel)}
	}
	return string(b), nil
}

// documentError turns a document ralph could not read into the step's failure.
func documentError(command, rel string, err error) error {
	var de *workspace.DocumentError
	switch {
	case errors.Is(err, workspace.ErrNoDocument):
		return &StepError{Step: command, Reason: fmt.Sprintf("the agent did not write the document at %s (RALPH_ARTIFACT)", rel)}
	case errors.As(err, &de):
		return &StepError{Step: command, Reason: de.Error()}
	}
	return err
}

// commitDoc commits only the document, as ralph read and checked it (other edits of a document step are
// not its product), with msg (which marks it with the step's key), and pushes.
func (r *runner) commitDoc(ctx context.Context, ws *workspace.Workspace, rel, doc, msg string) error {
	if err := r.refuseLeak("commit", "the document", doc); err != nil {
		return err
	}
	_, err := ws.CommitDocument(ctx, rel, []byte(doc), msg, r.author)
	var refused *workspace.RefusedError
	if errors.As(err, &refused) {
		return &StepError{Step: "commit", Reason: refused.Error() + "; nothing was pushed"}
	}
	if err != nil {
		return fmt.Errorf("committing %s: %w", rel, err)
	}
	r.w.checkpoint("after-commit")
	if err := push(ctx, r.ic, ws); err != nil {
		return err
	}
	r.w.checkpoint("after-push")
	return nil
}

// docStep is one document step: research, plan, review or self-review.
type docStep struct {
	kind    string // the artifact kind and the step's key name
	command string // the agent command
	header  string // the artifact comment's first line
	rel     string // the document's path in the branch
	subject string // the commit's subject
	check   func(doc string) error
}

// step is the document step that writes d for issue ic, accepted by check.
func (d Document) step(ic *issue, check func(doc string) error) docStep {
	return docStep{kind: d.Kind, command: d.Kind, header: d.Header, rel: d.path(ic.n, ic.rec), subject: d.subject(ic.n, ic.gh.Title), check: check}
}

// document runs a document step: the agent writes the document, check accepts it, ralph commits it with the
// step's key and pushes it (on the issue's branch, or on ralph's documents branch: docs.go), and posts it.
// A rerun after a crash finds the commit on the branch and the comment on the issue by that key, and
// repeats neither.
func (r *runner) document(ctx context.Context, rec *Record, ws *workspace.Workspace, st docStep, d prompts.Data) (string, Artifact, error) {
	key := r.ic.rec.StepKey(st.kind)
	// into is where the document is committed: the issue's branch (ws), or ralph's documents branch.
	into, err := r.docsFor(ctx, ws, key, st.rel)
	if err != nil {
		return "", Artifact{}, err
	}
	_, found, err := committedStep(ctx, r.ic, into, key)
	if err != nil {
		return "", Artifact{}, err
	}
	var doc string
	if found {
		r.log.Infof("#%d: %s is already on the branch %s (an earlier run stopped before recording it); using it", r.ic.n, key, into.Branch)
		if doc, err = into.Committed(ctx, st.rel); err != nil {
			return "", Artifact{}, err
		}
	} else if doc, err = r.writeDoc(ctx, ws, st.command, st.rel, d); err != nil {
		var be *session.BudgetError
		if doc != "" && errors.As(err, &be) {
			r.keepDocument(ctx, into, st, key, doc, be)
		}
		return "", Artifact{}, err
	}
	if st.check != nil {
		if err := st.check(doc); err != nil {
			return "", Artifact{}, &StepError{Step: st.command, Reason: err.Error()}
		}
	}
	if !found {
		if err := r.commitDoc(ctx, into, st.rel, doc, st.subject+"\n\n"+trailerKey+": "+key); err != nil {
			return "", Artifact{}, err
		}
	}
	keptApart(rec, into, ws)
	art, err := r.postArtifact(ctx, st.header, key, into.Branch, st.rel, doc)
	if err != nil {
		return "", Artifact{}, err
	}
	r.w.checkpoint("after-comment")
	rec.DoneRound(st.kind)
	return doc, art, nil
}

// artifactMarker identifies an artifact comment, so a repeated run edits it instead of posting it twice.
func artifactMarker(key string) string {
	return "<!-- ralph:artifact " + key + " -->"
}

// postArtifact posts (or, when a crashed run already posted it, edits) the document's comment.
func (r *runner) postArtifact(ctx context.Context, header, key, branch, rel, doc string) (Artifact, error) {
	url := r.gh.BlobURL(branch, rel)
	marker := artifactMarker(key)
	// The document is the agent's: quoted in a fence it cannot close, where nothing of it renders (no link,
	// image, HTML, reference or mention); the file's link shows it rendered, as the repository holds it.
	body := fmt.Sprintf("%s\n\nFile: [`%s`](%s) on branch `%s` (rendered there)\n\n<details open><summary>Document</summary>\n\n%s\n\n</details>",
		header, rel, url, branch, fence("markdown", strings.TrimRight(truncate(doc, 60000), "\n")))
	cm, err := r.w.upsertComment(ctx, marker, body)
	if err != nil {
		return Artifact{Path: rel, URL: url}, err
	}
	return Artifact{Path: rel, URL: url, Comment: cm.HTMLURL}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n\n… (truncated; the whole document is in the file)"
}

// keepDocument keeps the document an agent stopped at a budget had written: whole (it passes the step's
// check), it is committed with the step's key, so that /ralph retry finds it on the branch and goes on
// without the agent; unfinished, it is committed as a draft, for a person to read, and the retry writes
// it again.
func (r *runner) keepDocument(ctx context.Context, ws *workspace.Workspace, st docStep, key, doc string, be *session.BudgetError) {
	whole := st.check == nil || st.check(doc) == nil
	msg := st.subject + "\n\n" + trailerKey + ": " + key
	if !whole {
		msg = st.subject + " (unfinished: the budget was reached)\n\n" + draftKey + ": " + key
	}
	if err := r.commitDoc(ctx, ws, st.rel, doc, msg); err != nil {
		r.log.Warnf("#%d: keeping the document written before the budget: %v", r.ic.n, err)
		be.Kept = fmt.Sprintf("ralph could not keep the document the agent had written: %v.", err)
		return
	}
	where := fmt.Sprintf("[`%s`](%s) on the branch `%s`", st.rel, r.gh.BlobURL(ws.Branch, st.rel), ws.Branch)
	if whole {
		be.Kept = fmt.Sprintf("The document was whole when the agent was stopped: it is committed at %s, and `/ralph retry` posts it and goes on without running the agent again.", where)
		return
	}
	be.Kept = fmt.Sprintf("The document as far as the agent got is committed at %s, unfinished; `/ralph retry` has the agent write it again.", where)
}
