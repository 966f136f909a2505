package workspace

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// TestDocuments: ralph's documents branch is made from the base by its first commit and leaves the issue's
// branch alone; a document is read at ralph's last commit there whatever was pushed since, the commits
// past it are listed for the step to judge, and a branch that lost ralph's commit is refused.
func TestDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Owner{})
	const branch, rel = "ralph/docs/12", "thoughts/plan.md"
	w, err := f.store.OpenDocuments(ctx, 12, branch, "main", "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Start != f.base || w.RemoteOld != "" {
		t.Errorf("a new documents branch: Start %s, RemoteOld %q; want the base %s and none", w.Start, w.RemoteOld, f.base)
	}
	own, err := w.CommitDocument(ctx, rel, []byte("ralph's plan\n"), "plan\n\nRalph-Step: plan/1", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.remoteSHA(t, branch); got != own {
		t.Fatalf("the documents branch = %q, want %s", got, own)
	}
	if got := f.remoteSHA(t, "ralph/issue-12"); got != "" {
		t.Errorf("the issue's branch exists (%s); only the documents branch was written", got)
	}
	if got := f.ralph(t, "rev-parse", own+"^"); got != f.base {
		t.Errorf("the documents branch's first commit has parent %s, want the base %s", got, f.base)
	}

	// Someone with push access rewrites the plan on ralph's branch.
	clone := filepath.Join(f.root, "someone")
	f.git(t, f.root, "clone", "--quiet", "--branch", branch, f.origin, clone)
	writeFile(t, filepath.Join(clone, "thoughts", "plan.md"), "a swapped plan\n")
	f.git(t, clone, "commit", "--quiet", "-am", "plan\n\nRalph-Step: review/1")
	f.git(t, clone, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	swapped := f.git(t, clone, "rev-parse", "HEAD")

	w, err = f.store.OpenDocuments(ctx, 12, branch, "main", own)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := w.Own(ctx, rel); err != nil || got != "ralph's plan\n" {
		t.Errorf("Own = %q, %v; want ralph's plan, not the one pushed over it", got, err)
	}
	since, err := w.Since(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(since) != 1 || since[0].SHA != swapped || since[0].Message != "plan\n\nRalph-Step: review/1" || !slices.Equal(since[0].Paths, []string{rel}) {
		t.Errorf("Since = %+v, want the one commit pushed past ralph's (%s)", since, swapped)
	}
	if sha, found, err := w.FindStep(ctx, "Ralph-Step", "plan/1"); err != nil || found {
		t.Errorf("FindStep(plan/1) = %s, %v, %v: ralph's recorded commit is not a step left by a crash", sha, found, err)
	}

	// The branch is rewritten without ralph's commit, then deleted.
	f.git(t, clone, "reset", "--quiet", "--hard", f.base)
	writeFile(t, filepath.Join(clone, "thoughts", "plan.md"), "another plan\n")
	f.git(t, clone, "add", ".")
	f.git(t, clone, "commit", "--quiet", "-m", "plan")
	f.git(t, clone, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/"+branch)
	var moved *MovedError
	if _, err := f.store.OpenDocuments(ctx, 12, branch, "main", own); !errors.As(err, &moved) {
		t.Errorf("OpenDocuments of a rewritten branch = %v, want a *MovedError", err)
	}
	f.git(t, clone, "push", "--quiet", "origin", ":refs/heads/"+branch)
	if _, err := f.store.OpenDocuments(ctx, 12, branch, "main", own); !errors.As(err, &moved) {
		t.Errorf("OpenDocuments of a deleted branch = %v, want a *MovedError", err)
	}
}
