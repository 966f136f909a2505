package git

import (
	"context"
	"testing"
)

func TestRemoteHeads(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.git(t, f.repo.Dir, "push", "--quiet", "origin", "HEAD:refs/heads/ralph/1-x")
	def, shas, err := f.repo.RemoteHeads(ctx, "main", "ralph/1-x", "nope", "1-x")
	if err != nil {
		t.Fatal(err)
	}
	if def != "main" {
		t.Errorf("default branch = %q", def)
	}
	if len(shas) != 2 || shas["main"] != f.base || shas["ralph/1-x"] != f.base {
		t.Errorf("shas = %v, want main and ralph/1-x at %s", shas, f.base)
	}
}
