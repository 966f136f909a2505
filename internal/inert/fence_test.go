package inert

import (
	"strings"
	"testing"
)

// The text quoted cannot close its fence.
func TestFence(t *testing.T) {
	for _, s := range []string{"plain", "```\nclosed?\n```", "a ```` b", "`"} {
		got := Fence("text", s)
		lines := strings.Split(got, "\n")
		open, close := lines[0], lines[len(lines)-1]
		if strings.TrimSuffix(open, "text") != close || strings.Contains(s, close) {
			t.Errorf("Fence(%q) = %q: the text can close it", s, got)
		}
	}
}
