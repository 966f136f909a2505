package sweep

import (
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

func TestPriority(t *testing.T) {
	t.Parallel()
	issue := func(labels ...string) ghapi.Issue {
		var ls []ghapi.Label
		for _, l := range labels {
			ls = append(ls, ghapi.Label{Name: l})
		}
		return ghapi.Issue{Labels: ls}
	}
	tests := []struct {
		labels []string
		want   int
	}{
		{nil, 1000},
		{[]string{"bug"}, 1000},
		{[]string{"priority:critical"}, 0},
		{[]string{"Priority: High"}, 1},
		{[]string{"priority:medium"}, 2},
		{[]string{"priority:low"}, 3},
		{[]string{"priority:p0"}, 0},
		{[]string{"priority:5"}, 5},
		{[]string{"priority:low", "priority:high"}, 1},
		{[]string{"priority:whenever"}, 1000},
	}
	for _, tt := range tests {
		if got := priority(issue(tt.labels...)); got != tt.want {
			t.Errorf("priority(%v) = %d, want %d", tt.labels, got, tt.want)
		}
	}
}
