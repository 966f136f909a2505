package git

import (
	"context"
	"path/filepath"
	"testing"
)

func TestFindTrailer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	wt, err := f.repo.Worktree(ctx, "9", f.base)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(name, msg string) string {
		writeFile(t, filepath.Join(wt.Dir, name), name)
		sha, _, err := wt.CommitAll(ctx, msg, Signature{Name: "r", Email: "r@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	first := commit("a", "ralph: research\n\nRalph-Step: research/0")
	commit("b", "ralph: plan\n\nRalph-Step: plan/0")
	second := commit("c", "ralph: research again\n\nRalph-Step: research/0")
	tests := []struct {
		base, value string
		want        string
		found       bool
	}{
		{f.base, "research/0", second, true},
		{f.base, "plan/1", "", false},
		{first, "research/0", second, true},
		{second, "research/0", "", false},
		{f.base, "research", "", false},
		{f.base, "", second, true},
	}
	for _, tt := range tests {
		sha, found, err := wt.FindTrailer(ctx, tt.base, "Ralph-Step", tt.value)
		if err != nil || sha != tt.want || found != tt.found {
			t.Errorf("FindTrailer(%s, %q) = %s, %v, %v; want %s, %v", tt.base[:7], tt.value, sha, found, err, tt.want, tt.found)
		}
	}
}
