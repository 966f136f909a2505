package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Documents kept apart (documents: separate): the research, plan and reviews are committed on ralph's
// documents branch, <branch_prefix>docs/<N>, instead of the branch, so the pull request holds only
// the code; the status comment, the documents' comments and the pull request's body link to them
// there. ralph reads them back (the plan the phases follow, the reviews' findings) only at the commit it
// last made on that branch, which its record names (Record.DocsHead), and adds to the branch only while
// nothing but its own commit of the step lies past that one: a push of anyone else's there cannot change
// what ralph reads, and it stops ralph's next document with what to do.

// separateDocs says whether the documents (docs: the table's, Table.Documents) are kept apart. An
// issue keeps the way its first document went whatever the config says later: its documents are all in one
// place.
func separateDocs(rec Record, cfg config.Config, docs []Document) bool {
	if rec.Docs != "" {
		return true
	}
	for _, d := range docs {
		if a, ok := rec.Artifacts[d.Kind]; ok && d.Folder != "" && a.Path != "" {
			return false
		}
	}
	return cfg.Documents == config.DocumentsSeparate
}

// docsBranch is the documents branch of issue n under cfg.
func docsBranch(rec Record, cfg config.Config, n int) string {
	if rec.Docs != "" {
		return rec.Docs
	}
	return cfg.BranchPrefix + "docs/" + strconv.Itoa(n)
}

// openDocs opens the documents branch for the step, when its documents are kept apart.
func (r *Runner) openDocs(ctx context.Context) error {
	rec := r.ic.Rec
	if r.Docs != nil || !separateDocs(rec, r.cfg, r.table.Documents()) {
		return nil
	}
	branch := docsBranch(rec, r.cfg, r.ic.N)
	docs, err := r.workspaces.OpenDocuments(ctx, r.ic.N, branch, rec.Base, rec.DocsHead)
	var moved *workspace.MovedError
	if errors.As(err, &moved) {
		return &StepError{Step: "documents", Reason: fmt.Sprintf("%s. ralph reads the issue's documents only at its own commit, so nothing was run: put that commit back (`git push --force origin %s:refs/heads/%s`) and retry", moved.Error(), rec.DocsHead, branch)}
	}
	if err != nil {
		return fmt.Errorf("opening ralph's documents branch %s: %w", branch, err)
	}
	r.Docs = docs
	return nil
}

// docsFor is where the document of step key (at rel) is committed: the documents branch, checked to
// hold past ralph's last commit nothing but what an earlier run of this very step left there (its trailer,
// and no change but to its document); or ws, the branch.
func (r *Runner) docsFor(ctx context.Context, ws *workspace.Workspace, key, rel string) (*workspace.Workspace, error) {
	docs := r.Docs
	if docs == nil {
		return ws, nil
	}
	since, err := docs.Since(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading ralph's documents branch %s: %w", docs.Branch, err)
	}
	for _, c := range since {
		step := hasTrailer(c.Message, trailerKey, key) || hasTrailer(c.Message, draftKey, key)
		if !step || slices.ContainsFunc(c.Paths, func(p string) bool { return p != rel }) {
			past, remedy := "the base", fmt.Sprintf("delete the branch (`git push origin :refs/heads/%s`)", docs.Branch)
			if own := r.ic.Rec.DocsHead; own != "" {
				past = "ralph's last commit there (" + short(own) + ")"
				remedy = fmt.Sprintf("reset the branch to ralph's commit (`git push --force origin %s:refs/heads/%s`)", own, docs.Branch)
			}
			return nil, &StepError{Step: "documents", Reason: fmt.Sprintf("ralph's documents branch %s holds a commit ralph did not make (%s) past %s. Only ralph writes there, and it reads its documents at its own commits only; nothing was committed: %s, then retry", ownCode(docs.Branch), short(c.SHA), past, remedy)}
		}
	}
	return docs, nil
}

// hasTrailer says whether msg has the trailer line "key: value".
func hasTrailer(msg, key, value string) bool {
	for _, l := range strings.Split(msg, "\n") {
		if strings.TrimSpace(l) == key+": "+value {
			return true
		}
	}
	return false
}

// keptApart notes in the step's record where its document was committed, when on the documents branch.
func keptApart(rec *Record, into *workspace.Workspace, ws *workspace.Workspace) {
	if into == ws {
		return
	}
	rec.Docs, rec.DocsHead = into.Branch, into.RemoteOld
}
