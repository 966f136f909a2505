package git

import (
	"context"
	"path/filepath"
	"testing"
)

func TestCommitPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	wt, err := f.repo.Worktree(ctx, "7", f.base)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt.Dir, "doc.md"), "the document\n")
	writeFile(t, filepath.Join(wt.Dir, "other.txt"), "not part of it\n")
	sha, committed, err := wt.CommitPaths(ctx, "add doc", Signature{Name: "ralph", Email: "ralph@example.com"}, "doc.md")
	if err != nil || !committed {
		t.Fatalf("CommitPaths: committed %v, err %v", committed, err)
	}
	if got := f.git(t, wt.Dir, "show", "--name-only", "--format=%an %s", sha); got != "ralph add doc\n\ndoc.md" {
		t.Errorf("commit = %q", got)
	}
	if got := f.git(t, wt.Dir, "status", "--porcelain"); got != "?? other.txt" {
		t.Errorf("status after = %q, want other.txt left uncommitted", got)
	}
	// Nothing new in the path: no commit.
	again, committed, err := wt.CommitPaths(ctx, "again", Signature{}, "doc.md")
	if err != nil || committed || again != sha {
		t.Errorf("second CommitPaths: sha %s committed %v err %v", again, committed, err)
	}
}
