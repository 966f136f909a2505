package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Documents kept apart (documents: separate): ralph commits an issue's documents on a branch of its own
// beside the issue's, made from the base at its first commit, so that the pull request holds only the
// code and a person still opens the documents in the browser. Nobody else writes there: ralph reads a
// document at the commit it last made on that branch, as its record says (own), never at whatever the
// branch holds now, and it adds to the branch only while nothing but its own commits lie past that one.

// MovedError is ralph's documents branch no longer holding the commit ralph last made there: the branch
// was deleted, reset or rewritten by someone else.
type MovedError struct {
	Branch, Own string
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("ralph's documents branch %s no longer holds ralph's last commit there (%s): someone deleted, reset or rewrote it", e.Branch, short(e.Own))
}

// OpenDocuments opens issue's documents branch for a step: the branch as the remote has it (it is made
// from base by the first commit), where own is ralph's last commit ("" before the first). A branch that
// no longer holds own is a *MovedError.
func (s *Store) OpenDocuments(ctx context.Context, issue int, branch, base, own string) (*Workspace, error) {
	heads, bsha, refspecs, err := s.remoteHeads(ctx, branch, base)
	if err != nil {
		return nil, err
	}
	tip := heads[branch]
	if tip != "" {
		refspecs = append(refspecs, "+refs/heads/"+branch+":refs/remotes/origin/"+branch)
	}
	if err := s.repo.Fetch(ctx, refspecs...); err != nil {
		return nil, err
	}
	n := strconv.Itoa(issue)
	w := &Workspace{
		Branch: branch, Base: bsha, Start: bsha, RemoteOld: tip,
		store: s, issue: issue, index: filepath.Join(s.opts.GitDir, "index-docs-"+n),
		kept: "refs/ralph-kept/docs/" + n, own: own,
	}
	if tip != "" {
		w.Start = tip
	}
	if own != "" {
		if tip == "" {
			return nil, &MovedError{Branch: branch, Own: own}
		}
		// own is on the branch when no commit of its line is missing from the branch's.
		if missing, err := s.repo.Unpushed(ctx, tip, own); err != nil || len(missing) > 0 {
			return nil, &MovedError{Branch: branch, Own: own}
		}
		w.Base = own // a step's commit left by a crash is looked for past ralph's last one only
	}
	w.head = w.Start
	return w, nil
}

// Own returns the content of a document at ralph's last commit on its documents branch ("" when there is
// none), whatever was pushed there since.
func (w *Workspace) Own(ctx context.Context, rel string) (string, error) {
	if w.own == "" || rel == "" {
		return "", nil
	}
	b, found, err := w.store.repo.File(ctx, w.own, rel, w.store.opts.Limits.Document)
	if err != nil || !found {
		return "", err
	}
	return string(b), nil
}

// Since lists the commits on the documents branch past ralph's last one (past the base before the
// first), oldest first, each with its message and the paths it changes: a step finds there the commit an
// interrupted run of it left.
func (w *Workspace) Since(ctx context.Context) ([]Commit, error) {
	if w.RemoteOld == "" {
		return nil, nil
	}
	shas, err := w.store.repo.Unpushed(ctx, w.Base, w.RemoteOld)
	if err != nil {
		return nil, err
	}
	out := make([]Commit, 0, len(shas))
	parent := w.Base
	for _, sha := range shas {
		msg, err := w.store.repo.Message(ctx, sha)
		if err != nil {
			return nil, err
		}
		changes, err := w.store.repo.Changes(ctx, parent, sha)
		if err != nil {
			return nil, err
		}
		c := Commit{SHA: sha, Message: strings.TrimSpace(msg)}
		for _, ch := range changes {
			c.Paths = append(c.Paths, ch.Path)
		}
		out = append(out, c)
		parent = sha
	}
	return out, nil
}

// Commit is a commit, its message and the paths it changes against its first parent.
type Commit struct {
	SHA, Message string
	Paths        []string
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
