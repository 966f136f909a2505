package steps

import (
	"fmt"
	"strings"
	"testing"
)

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
	w := &Work{}
	for i := 0; i < refusedMax+3; i++ {
		w.NoteRefused(fmt.Sprintf("%d-%s.test", i, strings.Repeat("a", 300)))
	}
	if len(w.Refused) != refusedMax || w.RefusedMore != 3 || len(w.Refused[0]) > refusedLen+len("…") {
		t.Errorf("a step keeps %d hosts (%d more), the first %d bytes long", len(w.Refused), w.RefusedMore, len(w.Refused[0]))
	}
}
