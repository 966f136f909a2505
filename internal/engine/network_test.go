package engine

import (
	"fmt"
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
	got := refusedSection(rec)
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

// The record lives in a comment of bounded size: the refused hosts are kept on the last run alone, and the
// issue's list is capped.
func TestRefusedBounded(t *testing.T) {
	t.Parallel()
	var rec Record
	for r := 0; r < 5; r++ {
		var hosts []string
		for i := 0; i < refusedMax; i++ {
			hosts = append(hosts, fmt.Sprintf("h%d-%d.test", r, i))
		}
		rec.Note(Entry{Outcome: "done", Refused: hosts})
	}
	for i, run := range rec.History[:len(rec.History)-1] {
		if len(run.Refused) != 0 {
			t.Errorf("history[%d] keeps %d refused hosts", i, len(run.Refused))
		}
	}
	if got := len(rec.Last.Refused); got != refusedMax {
		t.Errorf("the last run keeps %d hosts, want %d", got, refusedMax)
	}
	if got := len(rec.Refused); got != refusedMax {
		t.Errorf("the record keeps %d hosts, want %d", got, refusedMax)
	}
	w := &work{}
	for i := 0; i < refusedMax+3; i++ {
		w.noteRefused(fmt.Sprintf("%d-%s.test", i, strings.Repeat("a", 300)))
	}
	if len(w.refused) != refusedMax || w.refusedMore != 3 || len(w.refused[0]) > refusedLen+len("…") {
		t.Errorf("a step keeps %d hosts (%d more), the first %d bytes long", len(w.refused), w.refusedMore, len(w.refused[0]))
	}
}
