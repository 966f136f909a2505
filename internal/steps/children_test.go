package steps

import (
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

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
