package engine

import (
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// The fix round takes the failing checks the base's rules require first, the rest after, each in GitHub's
// order.
func TestOrderRequired(t *testing.T) {
	var checks []ghapi.FailedCheck
	for _, name := range []string{"lint", "docs", "build", "e2e"} {
		c := ghapi.FailedCheck{}
		c.Run.Name = name
		checks = append(checks, c)
	}
	var got []string
	for _, c := range orderRequired(checks, []string{"e2e", "build", "missing"}) {
		got = append(got, c.Run.Name)
	}
	if want := []string{"build", "e2e", "lint", "docs"}; !slices.Equal(got, want) {
		t.Errorf("orderRequired = %q, want %q", got, want)
	}
}
