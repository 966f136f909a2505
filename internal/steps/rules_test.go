package steps

import (
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// TestRuleWorkListsEveryDocument: what the repository's rules judge of ralph's work lists the file and the
// commit of every document a step of the table writes to a branch (the security review's among them), on
// the branch or, kept apart, on the documents branch; never the triage, which is a comment.
func TestRuleWorkListsEveryDocument(t *testing.T) {
	t.Parallel()
	tab := Workflow()
	rec := Record{Branch: "ralph/1-x", Slug: "x", Date: "2026-11-28"}
	separate := config.Default()
	separate.Documents = config.DocumentsSeparate
	branch := tab.RuleWork(config.Default(), Signing{}, 1, "X", rec)
	if _, apart := tab.DocsRuleWork(config.Default(), Signing{}, 1, "X", rec); apart {
		t.Errorf("documents: branch keeps the documents apart")
	}
	docs, apart := tab.DocsRuleWork(separate, Signing{}, 1, "X", rec)
	if !apart {
		t.Fatalf("documents: separate does not keep the documents apart")
	}
	if got := tab.RuleWork(separate, Signing{}, 1, "X", rec); len(got.Paths) != 0 {
		t.Errorf("documents kept apart, the issue's branch still lists %q", got.Paths)
	}
	want := 0
	for _, d := range tab.Documents() {
		p := d.path(1, rec)
		if d.Folder == "" {
			if slices.Contains(branch.Paths, p) || slices.Contains(docs.Paths, p) {
				t.Errorf("the %s, a comment, is listed as a file", d.Kind)
			}
			continue
		}
		want++
		for name, w := range map[string][]string{"the issue's branch": branch.Paths, "the documents branch": docs.Paths} {
			if !slices.Contains(w, p) {
				t.Errorf("%s: %s's file %s is not listed", name, d.Kind, p)
			}
		}
	}
	if !slices.Contains(branch.Paths, securityDocument.path(1, rec)) || len(branch.Paths) != want || want < 5 {
		t.Errorf("the issue's branch lists %q, want the %d documents' files, the security review's among them", branch.Paths, want)
	}
}
