package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

func TestParseSplit(t *testing.T) {
	t.Parallel()
	doc := "Too big.\n\nDECISION: split\n\n## Sub-issue: Parser\n\nParse it.\n\n## Sub-issue: CLI\n\nUse it.\nBlocked by: 1\n\n## Sub-issue: Docs\n\nblocked by: #1, 2\n\n# Notes\nnot a part\n"
	got, err := ParseSplit(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []SubIssue{
		{Title: "Parser", Body: "Parse it."},
		{Title: "CLI", Body: "Use it.", BlockedBy: []int{1}},
		{Title: "Docs", BlockedBy: []int{1, 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseSplit (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"DECISION: split\n\n## Sub-issue: Only one\n",
		"## Sub-issue: A\n\nBlocked by: 2\n\n## Sub-issue: B\n",
		"## Sub-issue: A\n\n## Sub-issue: B\n\nBlocked by: 2\n",
		"## Sub-issue: A\n\n## Sub-issue: B\n\nBlocked by: soon\n",
	} {
		if _, err := ParseSplit(bad); err == nil {
			t.Errorf("ParseSplit(%q): no error", bad)
		}
	}
}

func TestParentMarker(t *testing.T) {
	t.Parallel()
	p, part, ok := parseParent("body\n" + parentMarker(12, 3) + "\n")
	if !ok || p != 12 || part != 3 {
		t.Errorf("parseParent = %d, %d, %v", p, part, ok)
	}
	if _, _, ok := parseParent("no marker"); ok {
		t.Errorf("parseParent found a marker in plain text")
	}
}

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
