package prompts

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Size caps for untrusted text in a prompt, in bytes.
const (
	MaxTitle   = 300
	MaxBody    = 20000
	MaxComment = 4000
)

// Sanitize makes text written by GitHub users safe to quote in a prompt: invalid UTF-8 is replaced, hidden
// content a person reading the issue on GitHub would not see is removed (HTML comments, zero-width and
// bidirectional control characters, other control characters), and text longer than max bytes is cut with
// a note that says so.
func Sanitize(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = stripHTMLComments(s)
	s = strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, s)
	if max > 0 && len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("\n[… truncated by ralph: the text is %d bytes; only the first %d are shown]", len(s), cut)
	}
	return s
}

// stripHTMLComments removes <!-- … --> (GitHub does not render them); an unterminated one runs to the end.
func stripHTMLComments(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			return b.String()
		}
		s = s[i+4+j+3:]
	}
}

func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r >= 0x200B && r <= 0x200F, // zero-width space, joiners, LRM, RLM
		r >= 0x202A && r <= 0x202E, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0xFEFF, r == 0x061C, r == 0x00AD, r == 0x180E:
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tag characters, which can spell out hidden text
		return true
	}
	return unicode.IsControl(r) && r != '\r'
}
