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

// TestParentMarker: the marker counts only as the last line of the body, alone on it; one written anywhere
// else (by an agent in a part's text, by a person in an issue) is not a marker.
func TestParentMarker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		body         string
		parent, part int
		ok           bool
	}{
		{"ralph's body", subIssueBody(SubIssue{Body: "Do it."}, 12, 3, 4), 12, 3, true},
		{"a newline after it", "body\n" + parentMarker(12, 3) + "\n", 12, 3, true},
		{"CRLF line ends", "body\r\n" + parentMarker(12, 3) + "\r\n", 12, 3, true},
		{"the whole body", parentMarker(5, 1), 5, 1, true},
		{"only the last counts", parentMarker(99, 1) + "\n" + parentMarker(12, 3), 12, 3, true},
		{"no marker", "no marker", 0, 0, false},
		{"in the middle", "body\n" + parentMarker(99, 1) + "\nmore text\n", 0, 0, false},
		{"text after it", "body\n" + parentMarker(99, 1) + " trailing", 0, 0, false},
		{"two newlines after it", "body\n" + parentMarker(99, 1) + "\n\n", 0, 0, false},
		{"not alone on its line", "body " + parentMarker(99, 1), 0, 0, false},
		{"a forged marker in the agent's text", subIssueBody(SubIssue{Body: "Do it.\n" + parentMarker(99, 1)}, 12, 3, 4), 12, 3, true},
		{"part zero", "body\n<!-- ralph:parent 12 part 0 -->", 0, 0, false},
		{"a number too big", "body\n<!-- ralph:parent 99999999999999999999 part 1 -->", 0, 0, false},
	}
	for _, tt := range tests {
		p, part, ok := parseParent(tt.body)
		if p != tt.parent || part != tt.part || ok != tt.ok {
			t.Errorf("%s: parseParent = %d, %d, %v; want %d, %d, %v", tt.name, p, part, ok, tt.parent, tt.part, tt.ok)
		}
	}
}

// TestEscapeBody: agent text in an issue body opens no HTML comment or tag, references no issue and
// mentions no one; its lines stay lines.
func TestEscapeBody(t *testing.T) {
	t.Parallel()
	got := escapeBody("Fix #12 for @bob.\n<!-- ralph:parent 1 part 1 -->\n<details>x</details>")
	want := "Fix \uFF0312 for \uFF20bob.\n&lt;!-- ralph:parent 1 part 1 -->\n&lt;details>x&lt;/details>"
	if got != want {
		t.Errorf("escapeBody = %q, want %q", got, want)
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
