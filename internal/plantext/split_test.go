package plantext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"ralph's body", SubIssueBody(SubIssue{Body: "Do it."}, 12, 3, 4), 12, 3, true},
		{"a newline after it", "body\n" + parentMarker(12, 3) + "\n", 12, 3, true},
		{"CRLF line ends", "body\r\n" + parentMarker(12, 3) + "\r\n", 12, 3, true},
		{"the whole body", parentMarker(5, 1), 5, 1, true},
		{"only the last counts", parentMarker(99, 1) + "\n" + parentMarker(12, 3), 12, 3, true},
		{"no marker", "no marker", 0, 0, false},
		{"in the middle", "body\n" + parentMarker(99, 1) + "\nmore text\n", 0, 0, false},
		{"text after it", "body\n" + parentMarker(99, 1) + " trailing", 0, 0, false},
		{"two newlines after it", "body\n" + parentMarker(99, 1) + "\n\n", 0, 0, false},
		{"not alone on its line", "body " + parentMarker(99, 1), 0, 0, false},
		{"a forged marker in the agent's text", SubIssueBody(SubIssue{Body: "Do it.\n" + parentMarker(99, 1)}, 12, 3, 4), 12, 3, true},
		{"part zero", "body\n<!-- ralph:parent 12 part 0 -->", 0, 0, false},
		{"a number too big", "body\n<!-- ralph:parent 99999999999999999999 part 1 -->", 0, 0, false},
	}
	for _, tt := range tests {
		p, part, ok := ParseParent(tt.body)
		if p != tt.parent || part != tt.part || ok != tt.ok {
			t.Errorf("%s: ParseParent = %d, %d, %v; want %d, %d, %v", tt.name, p, part, ok, tt.parent, tt.part, tt.ok)
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

// TestCheckSplit: a split with more parts than split.max (or than the record keeps), a title GitHub would
// refuse or a body too long once escaped is refused before anything is created, and says why.
func TestCheckSplit(t *testing.T) {
	t.Parallel()
	parts := func(n int) []SubIssue {
		var out []SubIssue
		for i := range n {
			out = append(out, SubIssue{Title: fmt.Sprintf("part %d", i+1), Body: "Do it."})
		}
		return out
	}
	tests := []struct {
		name  string
		subs  []SubIssue
		limit int
		want  string
	}{
		{"within split.max", parts(3), 3, ""},
		{"over split.max", parts(4), 3, "The triage asked for 4 sub-issues; one split may create at most 3"},
		{"no limit set: the default", parts(6), 0, "at most 5"},
		{"over what the record keeps", parts(31), 100, "at most 30"},
		{"a title GitHub refuses", []SubIssue{{Title: strings.Repeat("t", 257)}, {Title: "b"}}, 5, "The title of sub-issue 1 is 257 characters"},
		// Each "<" becomes "&lt;": 15,000 of them are 60,000 characters once escaped, one more is too many.
		{"a body at the bound once escaped", []SubIssue{{Title: "a", Body: strings.Repeat("<", 15000)}, {Title: "b"}}, 5, ""},
		{"a body over the bound once escaped", []SubIssue{{Title: "a", Body: strings.Repeat("<", 15001)}, {Title: "b"}}, 5, "The body of sub-issue 1 (a) is 60004 characters once escaped"},
	}
	for _, tt := range tests {
		got := CheckSplit(tt.subs, tt.limit)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: CheckSplit = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRalphsSubIssue: a sub-issue is ralph's only when ralph's bot opened it and its body ends with the
// marker.
func TestRalphsSubIssue(t *testing.T) {
	t.Parallel()
	body := SubIssueBody(SubIssue{Body: "Do it."}, 1, 1, 2)
	for _, tt := range []struct {
		name, body, author string
		want               bool
	}{
		{"ralph's", body, "ralph[bot]", true},
		{"opened by another", body, "mallory", false},
		{"no marker", "Do it.", "ralph[bot]", false},
	} {
		if got := RalphsSubIssue(tt.body, tt.author, "ralph[bot]"); got != tt.want {
			t.Errorf("%s: RalphsSubIssue = %v, want %v", tt.name, got, tt.want)
		}
	}
}
