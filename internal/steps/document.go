package steps

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
func (r *Runner) writeDoc(ctx context.Context, ws *workspace.Workspace, command, rel string, d prompts.Data) (string, error) {
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
func (r *Runner) commitDoc(ctx context.Context, ws *workspace.Workspace, rel, doc, msg string) error {
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
	r.w.Checkpoint("after-commit")
	if err := push(ctx, ws); err != nil {
		return err
	}
	r.w.Checkpoint("after-push")
	return nil
}

// DocStep is one document step: research, plan, review or self-review.
type DocStep struct {
	Kind    string // the artifact kind and the step's key name
	Command string // the agent command (its prompt template)
	Header  string // the artifact comment's first line
	Rel     string // the document's path in the branch
	Subject string // the commit's subject
	Check   func(doc string) error
}

// Step is the document step that writes d for issue ic, accepted by check.
func (d Document) Step(ic Issue, check func(doc string) error) DocStep {
	return DocStep{Kind: d.Kind, Command: d.Kind, Header: d.Header, Rel: d.path(ic.N, ic.Rec), Subject: d.subject(ic.N, ic.GH.Title), Check: check}
}

// WriteDocument runs a document step: the agent writes the document, check accepts it, ralph commits it with the
// step's key and pushes it (on the issue's branch, or on ralph's documents branch: docs.go), and posts it.
// A rerun after a crash finds the commit on the branch and the comment on the issue by that key, and
// repeats neither.
func (r *Runner) WriteDocument(ctx context.Context, rec *Record, ws *workspace.Workspace, st DocStep, d prompts.Data) (string, Artifact, error) {
	key := r.ic.Rec.StepKey(st.Kind)
	// into is where the document is committed: the issue's branch (ws), or ralph's documents branch.
	into, err := r.docsFor(ctx, ws, key, st.Rel)
	if err != nil {
		return "", Artifact{}, err
	}
	_, found, err := committedStep(ctx, into, key)
	if err != nil {
		return "", Artifact{}, err
	}
	var doc string
	if found {
		r.log.Infof("#%d: %s is already on the branch %s (an earlier run stopped before recording it); using it", r.ic.N, key, into.Branch)
		if doc, err = into.Committed(ctx, st.Rel); err != nil {
			return "", Artifact{}, err
		}
	} else if doc, err = r.writeDoc(ctx, ws, st.Command, st.Rel, d); err != nil {
		var be *session.BudgetError
		if doc != "" && errors.As(err, &be) {
			r.keepDocument(ctx, into, st, key, doc, be)
		}
		return "", Artifact{}, err
	}
	if st.Check != nil {
		if err := st.Check(doc); err != nil {
			return "", Artifact{}, &StepError{Step: st.Command, Reason: err.Error()}
		}
	}
	if !found {
		if err := r.commitDoc(ctx, into, st.Rel, doc, st.Subject+"\n\n"+trailerKey+": "+key); err != nil {
			return "", Artifact{}, err
		}
	}
	keptApart(rec, into, ws)
	art, err := r.postArtifact(ctx, st.Header, key, into.Branch, st.Rel, doc)
	if err != nil {
		return "", Artifact{}, err
	}
	r.w.Checkpoint("after-comment")
	rec.DoneRound(st.Kind)
	return doc, art, nil
}

// artifactMarker identifies an artifact comment, so a repeated run edits it instead of posting it twice.
func artifactMarker(key string) string {
	return "<!-- ralph:artifact " + key + " -->"
}

// postArtifact posts (or, when a crashed run already posted it, edits) the document's comment.
func (r *Runner) postArtifact(ctx context.Context, header, key, branch, rel, doc string) (Artifact, error) {
	url := r.gh.BlobURL(branch, rel)
	marker := artifactMarker(key)
	// The document is the agent's: quoted in a fence it cannot close, where nothing of it renders (no link,
	// image, HTML, reference or mention); the file's link shows it rendered, as the repository holds it.
	body := fmt.Sprintf("%s\n\nFile: [`%s`](%s) on branch `%s` (rendered there)\n\n<details open><summary>Document</summary>\n\n%s\n\n</details>",
		header, rel, url, branch, fence("markdown", strings.TrimRight(truncate(doc, 60000), "\n")))
	cm, err := r.w.UpsertComment(ctx, marker, body)
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
func (r *Runner) keepDocument(ctx context.Context, ws *workspace.Workspace, st DocStep, key, doc string, be *session.BudgetError) {
	whole := st.Check == nil || st.Check(doc) == nil
	msg := st.Subject + "\n\n" + trailerKey + ": " + key
	if !whole {
		msg = st.Subject + " (unfinished: the budget was reached)\n\n" + draftKey + ": " + key
	}
	if err := r.commitDoc(ctx, ws, st.Rel, doc, msg); err != nil {
		r.log.Warnf("#%d: keeping the document written before the budget: %v", r.ic.N, err)
		be.Kept = fmt.Sprintf("ralph could not keep the document the agent had written: %v.", err)
		return
	}
	where := fmt.Sprintf("[`%s`](%s) on the branch `%s`", st.Rel, r.gh.BlobURL(ws.Branch, st.Rel), ws.Branch)
	if whole {
		be.Kept = fmt.Sprintf("The document was whole when the agent was stopped: it is committed at %s, and `/ralph retry` posts it and goes on without running the agent again.", where)
		return
	}
	be.Kept = fmt.Sprintf("The document as far as the agent got is committed at %s, unfinished; `/ralph retry` has the agent write it again.", where)
}
