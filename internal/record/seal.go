package record

import (
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// Seal is a comment's body as ralph posts it: what it composed, in which nothing can pass for a marker,
// and then its one marker, at the fixed end. Sealing a sealed body changes nothing.
func Seal(content, marker string) string {
	content = strings.TrimSuffix(strings.TrimRight(content, " \t\r\n"), marker)
	return FitBody(inert.Unmarked(strings.TrimRight(content, " \t\r\n"))) + "\n\n" + marker
}

// Carries says whether body is a comment that ralph sealed with marker: the marker is its end, where no
// quoted text can reach.
func Carries(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), marker)
}
