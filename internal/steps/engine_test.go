package steps

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc, want string
	}{
		{"fine\n\nVERDICT: APPROVED\n", "APPROVED"},
		{"VERDICT: NEEDS_ITERATION\nfix x", "NEEDS_ITERATION"},
		{"**VERDICT: APPROVED**", "APPROVED"},
		{"VERDICT: NEEDS_ITERATION\nthen\nVERDICT: APPROVED", "APPROVED"},
		{"the VERDICT: APPROVED inside a sentence", ""},
		{"no verdict", ""},
		{"VERDICT: MAYBE", ""},
	}
	for _, tt := range tests {
		got, err := ParseVerdict(tt.doc)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("ParseVerdict(%q) = %q, %v; want %q", tt.doc, got, err, tt.want)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	rec := Record{
		State: workflow.InProgress, Branch: "ralph/4-x", Base: "main", Slug: "x", Date: "2026-11-22",
		Phases:    []Phase{{Title: "One", SHA: "abc1234def"}, {Title: "Two"}},
		Feedback:  "a reason with --> and <!-- inside",
		Artifacts: map[string]Artifact{"plan": {Path: "thoughts/shared/plans/p.md", URL: "https://x"}},
		Last:      &Entry{Step: workflow.Implement, From: workflow.InProgress, To: workflow.InProgress, At: time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC), Outcome: "done"},
	}
	body := Workflow().RenderStatus(4, rec, config.Default(), Links{}, Facts{})
	if !strings.HasPrefix(body, record.StatusMarker) {
		t.Fatalf("status comment does not start with the marker")
	}
	got, ok, err := record.Parse(body)
	if err != nil || !ok {
		t.Fatalf("ParseRecord: ok %v, err %v", ok, err)
	}
	rec.Version = 1
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("record round trip (-want +got):\n%s", diff)
	}
	for _, want := range []string{"## ralph: In Progress", "Phases (1 of 2 done)", "- [x] Phase 1: One — abc1234", "- [ ] Phase 2: Two", "```mermaid", "class InProgress current"} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, body)
		}
	}
	if _, ok, _ := record.Parse("no record here"); ok {
		t.Errorf("ParseRecord found a record in plain text")
	}
	if _, _, err := record.Parse("<!-- ralph:record\n{broken\n-->"); err == nil {
		t.Errorf("ParseRecord accepted a broken record")
	}
}
