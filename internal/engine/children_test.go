package engine

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

func TestChildState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		is   ghapi.Issue
		want string
	}{
		{ghapi.Issue{State: "open"}, ""},
		{ghapi.Issue{State: "open", Labels: []ghapi.Label{{Name: "ralph:in-review"}}}, "in-review"},
		{ghapi.Issue{State: "closed", Labels: []ghapi.Label{{Name: "ralph:in-review"}}}, "done"},
		{ghapi.Issue{State: "closed", StateReason: "not_planned"}, "canceled"},
		{ghapi.Issue{State: "closed", StateReason: "completed"}, "done"},
	}
	for _, tt := range tests {
		if got := string(labelState(tt.is)); got != tt.want {
			t.Errorf("labelState(%+v) = %q, want %q", tt.is, got, tt.want)
		}
	}
}
