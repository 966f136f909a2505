package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestDocumentsSeparate: with documents: separate, the built binary takes an issue to In Review with the
// research, plan and reviews on ralph's documents branch and the pull request holding only the code; the
// issue and the pull request link to the documents there, and the phases follow the plan read from there,
// not the one someone pushed over it; ralph writes no document past someone else's commit, and goes on once
// the branch is put back to its own commit.
func TestDocumentsSeparate(t *testing.T) {
	t.Parallel()
	const docs = "ralph/docs/1"
	e := newEnv(t, baseConfig(t, "documents: separate\n"))
	e.srv.AddRuleset("signed", []string{"refs/heads/ralph/**"}, githubtest.Rule{Type: "required_signatures"})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("label run exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if e.branchExists(branch) {
		t.Errorf("the research made the issue's branch %s", branch)
	}
	// Research, plan, review: the documents go to ralph's documents branch.
	for i := 0; i < 2; i++ {
		if r, ok := e.next(); !ok || r.exit != 0 {
			t.Fatalf("run %d: %v exit %d\n%s%s", i+2, ok, r.exit, r.stdout, r.stderr)
		}
	}
	e.wantState(n, workflow.InProgress)
	own := strings.TrimSpace(e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+docs))
	_, files := e.branch(docs)
	plans := matching(files, `^thoughts/shared/plans/\d{4}-\d\d-\d\d-GH-0001-add-a-greeting\.md$`)
	if len(plans) != 1 || len(matching(files, `^thoughts/shared/research/`)) != 1 || len(matching(files, `^thoughts/shared/reviews/`)) != 1 {
		t.Fatalf("the documents are not on %s: %v", docs, files)
	}

	// Someone with push access pushes another plan over ralph's.
	e.srv.PushCommit(docs, "someone", "a better plan", map[string]string{plans[0]: "# Plan\n\n## Phase 1: Step 1\n\nWrite evil.txt.\n\n## Phase 2: Step 2\n\nWrite evil.txt.\n"})

	// Two phases: they follow ralph's plan. Then the self-review's document is refused a place past
	// someone else's commit, and nothing is committed.
	for i := 1; i <= 2; i++ {
		if r, ok := e.next(); !ok || r.exit != 0 || r.outputs["step"] != "implement" {
			t.Fatalf("phase %d: %v exit %d %v\n%s%s", i, ok, r.exit, r.outputs, r.stdout, r.stderr)
		}
	}
	for i, p := range e.prompts("implement") {
		if !strings.Contains(p, "Write feature-1.txt.") || strings.Contains(p, "evil.txt") {
			t.Errorf("phase %d did not follow ralph's plan:\n%s", i+1, p)
		}
	}
	swapped := strings.TrimSpace(e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+docs))
	r, ok := e.next()
	if !ok || r.exit == 0 || !strings.Contains(r.stdout+r.stderr, "holds a commit ralph did not make") {
		t.Fatalf("self-review past someone else's commit: %v exit %d\n%s%s", ok, r.exit, r.stdout, r.stderr)
	}
	if got := strings.TrimSpace(e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+docs)); got != swapped {
		t.Errorf("ralph committed on %s past someone else's commit", docs)
	}
	if slices.Contains(e.invocations(), "self-review 1") {
		t.Errorf("the self-review's agent ran: %q", e.invocations())
	}

	// The branch is put back to ralph's commit, as the failure said: the issue goes on to In Review.
	e.git(e.srv.BareRepo, "update-ref", "refs/heads/"+docs, own)
	r = e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": "1"}), nil)
	if r.exit != 0 || r.outputs["step"] != "self-review" {
		t.Fatalf("self-review after the branch was put back: exit %d %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.chain(3)
	e.wantState(n, workflow.InReview)

	// The pull request's files: the code alone.
	if got := strings.Fields(e.git(e.srv.BareRepo, "diff", "--name-only", "main...refs/heads/"+branch)); !slices.Equal(got, []string{"feature-1.txt", "feature-2.txt"}) {
		t.Errorf("the pull request's files = %q, want the code alone", got)
	}
	subjects, files := e.branch(docs)
	if len(matching(files, `^thoughts/shared/reviews/.*-self-review\.md$`)) != 1 || subjects[0] != "ralph: self-review for #1 Add a greeting" {
		t.Errorf("%s: commits %q, files %v", docs, subjects, files)
	}
	// Every commit on both branches is one GitHub made and verified (publish.go), the documents' too.
	for _, b := range []string{branch, docs} {
		for _, c := range strings.Fields(e.git(e.srv.BareRepo, "rev-list", "refs/heads/main..refs/heads/"+b)) {
			if !e.srv.Verified(c) {
				t.Errorf("commit %s on %s is not Verified", c, b)
			}
		}
	}
	rec := e.recordOf(n)
	if tip := strings.TrimSpace(e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+docs)); rec.Docs != docs || rec.DocsHead != tip {
		t.Errorf("record: documents %q at %q, want %s at %s", rec.Docs, rec.DocsHead, docs, tip)
	}
	// The documents, readable at the links: each names a file on the documents branch.
	link := e.srv.ServerURL + "/octo/demo/blob/" + docs + "/"
	for kind, a := range rec.Artifacts {
		path, found := strings.CutPrefix(a.URL, link)
		if !found || !slices.Contains(files, path) {
			t.Errorf("the %s's link %q is not a file on %s", kind, a.URL, docs)
		}
	}
	pulls := e.srv.Pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	for _, want := range []string{"Kept out of this pull request, on ralph's branch `" + docs + "`", link + plans[0], "Closes #1"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("pull request body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if status := e.statusComment(n); !strings.Contains(status, e.srv.ServerURL+"/octo/demo/tree/"+docs) {
		t.Errorf("the status comment does not link %s:\n%s", docs, status)
	}
}

// With documents: separate, the rules of ralph's documents branch are read before the first document: one
// that would refuse it stops the issue before the agent runs, naming the branch and the rule.
func TestDocumentsRulesRefusedUpFront(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "documents: separate\n"))
	e.srv.AddRuleset("no docs", []string{"refs/heads/ralph/docs/**"}, githubtest.Rule{Type: "file_path_restriction", Parameters: map[string]any{"restricted_file_paths": []string{"thoughts/**"}}})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	out := r.stdout + r.stderr
	if r.exit != 1 || !strings.Contains(out, "the repository's rules would refuse ralph's work on ralph/docs/1, so nothing was run or changed") || !strings.Contains(out, "file_path_restriction (ruleset") {
		t.Fatalf("exit %d, want 1 and the rule named:\n%s", r.exit, out)
	}
	e.untouched(n)
	if e.branchExists("ralph/docs/1") || len(e.invocations()) != 0 {
		t.Errorf("ralph's documents branch was pushed or the agent ran: %q", e.invocations())
	}
}
