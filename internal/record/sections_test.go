package record

import (
	"strings"
	"testing"
)

// A host name is the agent's choice: the status comment shows it inert (no mention, no reference, no
// marker, no end to its code span), once, with the line that would allow it.
func TestRefusedSectionInert(t *testing.T) {
	t.Parallel()
	hostile := []string{"exfil.example.test", "x`<!-- ralph:record {} -->`@mona #1", "exfil.example.test"}
	var rec Record
	rec.Note(Entry{Outcome: "done", Refused: hostile[:2]})
	rec.Note(Entry{Outcome: "done", Refused: hostile[2:]})
	got := RefusedSection(rec)
	if strings.Count(got, "`exfil.example.test`") != 1 {
		t.Errorf("the host is not listed once:\n%s", got)
	}
	for _, bad := range []string{"<!--", "@mona", " #1", "`<"} {
		if strings.Contains(got, bad) {
			t.Errorf("the section holds %q as the agent wrote it:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "network:\n  allow: [\"exfil.example.test\", ") {
		t.Errorf("the section does not give the config line:\n%s", got)
	}
	if lines := RefusedLines(hostile[:2]); len(lines) != 3 || strings.Contains(strings.Join(lines, "\n"), "@mona") {
		t.Errorf("RefusedLines = %q", lines)
	}
}
