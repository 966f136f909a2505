package steps

import (
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/rules"
)

// Signing says whether GitHub will find ralph's commits signed, and how: a rule requiring signatures is
// judged by it.
type Signing struct {
	Signed bool
	How    string // "ssh key ~/.ssh/id_ed25519.pub", or why they are not signed
}

// RuleWork is what ralph does on issue n's branch (rec names it), for the repository's rules to judge: the
// branch, the commit messages it writes, the files it writes itself (its documents, unless they are kept
// apart: DocsRuleWork), and how it signs.
func (t *Table) RuleWork(cfg config.Config, s Signing, n int, title string, rec Record) rules.Work {
	w := ruleWork(cfg, s, rec.Branch)
	if docs := t.Documents(); !separateDocs(rec, cfg, docs) {
		w = withDocuments(w, n, title, rec, docs)
	}
	w.Messages = append(w.Messages, fmt.Sprintf("ralph: Phase 1 of 1: #%d %s\n\n%s: implement", n, Inert(title), trailerKey))
	return w
}

// DocsRuleWork is what ralph does on issue n's documents branch, when its documents are kept apart
// (documents: separate): ok is false when they are on the branch.
func (t *Table) DocsRuleWork(cfg config.Config, s Signing, n int, title string, rec Record) (w rules.Work, ok bool) {
	docs := t.Documents()
	if !separateDocs(rec, cfg, docs) {
		return rules.Work{}, false
	}
	return withDocuments(ruleWork(cfg, s, docsBranch(rec, cfg, n)), n, title, rec, docs), true
}

func ruleWork(cfg config.Config, s Signing, branch string) rules.Work {
	w := rules.Work{Branch: branch, Prefix: cfg.BranchPrefix, Signed: s.Signed, Signing: s.How}
	if w.Signing == "" {
		w.Signing = "ralph's commits are made with git and not signed"
	}
	return w
}

// withDocuments adds the commits and files of the documents (docs) that are files to w.
func withDocuments(w rules.Work, n int, title string, rec Record, docs []Document) rules.Work {
	for _, d := range docs {
		if d.Folder == "" {
			continue // a comment only (the triage)
		}
		w.Messages = append(w.Messages, d.subject(n, title)+"\n\n"+trailerKey+": "+d.Kind)
		w.Paths = append(w.Paths, d.path(n, rec))
	}
	return w
}
