package steps

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

// Each required check is passing, failing, pending or missing by the head's check runs (the status
// comment's list of them: internal/record TestRequiredSection).
func TestRequiredStatus(t *testing.T) {
	run := func(name, status, conclusion string) ghapi.CheckRun {
		return ghapi.CheckRun{Name: name, Status: status, Conclusion: conclusion}
	}
	runs := []ghapi.CheckRun{
		run("build", "completed", "success"),
		run("e2e", "completed", "failure"),
		run("lint", "in_progress", ""),
		run("docs", "completed", "cancelled"),
		run("other", "completed", "failure"),
	}
	got := requiredStatus([]string{"build", "e2e", "lint", "docs", "deploy @mona"}, runs)
	want := []RequiredCheck{{Name: "build", State: "passing"}, {Name: "e2e", State: "failing"}, {Name: "lint", State: "pending"}, {Name: "docs", State: "failing"}, {Name: "deploy @mona", State: "missing"}}
	if !slices.Equal(got, want) {
		t.Fatalf("requiredStatus = %v, want %v", got, want)
	}
}
