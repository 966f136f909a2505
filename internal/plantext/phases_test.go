package plantext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/record"
)

func TestParsePhases(t *testing.T) {
	t.Parallel()
	plan := "# Plan\n\nintro\n\n## Phase 1: Parse input\n\nedit a.go\n\n## Phase 2: Wire it up\n\nedit b.go\n\n## Notes\n\nnot a phase\n"
	got, err := ParsePhases(plan)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Phase{
		{Title: "Parse input", Text: "## Phase 1: Parse input\n\nedit a.go"},
		{Title: "Wire it up", Text: "## Phase 2: Wire it up\n\nedit b.go"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParsePhases (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"# Plan\n\nno phases here\n",
		"## Phase 2: Starts at two\n",
		"## Phase 1: a\n## Phase 3: skips two\n",
		"### Phase 1: wrong level\n",
	} {
		if _, err := ParsePhases(bad); err == nil {
			t.Errorf("ParsePhases(%q): no error", bad)
		}
	}
}

// TestCheckPhases: a plan with more phases than max_phases (or than the record keeps), a title too long for
// a commit's subject or one with a control character is refused before any phase starts, and says why.
func TestCheckPhases(t *testing.T) {
	t.Parallel()
	phases := func(n int) []record.Phase {
		var out []record.Phase
		for i := range n {
			out = append(out, record.Phase{Title: fmt.Sprintf("phase %d", i+1)})
		}
		return out
	}
	tests := []struct {
		name   string
		phases []record.Phase
		limit  int
		want   string
	}{
		{"within max_phases", phases(3), 3, ""},
		{"over max_phases", phases(4), 3, "The plan has 4 phases; a plan may have at most 3"},
		{"no limit set: the default", phases(21), 0, "at most 20"},
		{"over what the record keeps", phases(61), 100, "at most 60"},
		{"a title too long", []record.Phase{{Title: strings.Repeat("t", record.MaxPhaseTitle+1)}}, 5, "The title of phase 1 is"},
		{"a control character", []record.Phase{{Title: "ok"}, {Title: "a\x00b"}}, 5, "The title of phase 2 holds a control character"},
	}
	for _, tt := range tests {
		got := CheckPhases(tt.phases, tt.limit)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: CheckPhases = %q, want %q", tt.name, got, tt.want)
		}
	}
}
