// Package inert makes text that is not ralph's own harmless where ralph shows it: to the terminal it is printed
// on (Filter, String), and to GitHub, which acts on references, mentions, links and markers (GitHub, Code).
package inert

import (
	"fmt"
	"unicode/utf8"
)

// Filter is what ralph writes to a terminal of text that is not its own: a terminal acts on control
// characters and escape sequences (moving the cursor over what was printed, setting the clipboard with
// OSC 52, links with OSC 8, the window's title), so each one is shown as a caret-notation look-alike
// instead ("^[" for ESC). Line feeds and tabs are kept. pending holds a byte that may start a C1 control
// character (U+0080–U+009F) whose second byte comes in the next write. The zero Filter is ready to use.
type Filter struct {
	pending []byte
}

// Bytes returns p with every control character but \n and \t made visible; the end of p that may be the
// start of a character is kept for the next call (Flush returns it).
func (f *Filter) Bytes(p []byte) []byte {
	if len(f.pending) > 0 {
		p = append(f.pending, p...)
		f.pending = nil
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
			i++
		case c < 0x20:
			out = append(out, '^', c+'@')
			i++
		case c == 0x7f:
			out = append(out, '^', '?')
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			if !utf8.FullRune(p[i:]) && len(p)-i < utf8.UTFMax {
				f.pending = append([]byte(nil), p[i:]...)
				return out
			}
			r, n := utf8.DecodeRune(p[i:])
			if r >= 0x80 && r <= 0x9f {
				out = append(out, '^', '[', byte(r-0x80+'@')) // C1 = ESC + a letter
			} else if reorders(r) {
				out = fmt.Appendf(out, "<U+%04X>", r)
			} else {
				out = append(out, p[i:i+n]...)
			}
			i += n
		}
	}
	return out
}

// reorders says whether r changes the order or the lines in which a terminal shows what follows it
// (bidirectional marks, embeddings, overrides and isolates; the line and paragraph separators): what
// others wrote could show in another order than it reads ("Trojan Source"), so it is shown by its code
// point.
func reorders(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Flush returns what Bytes kept of an unfinished character: at the end of the text it is no character
// (no C1 control either), and is given as it is.
func (f *Filter) Flush() []byte {
	p := f.pending
	f.pending = nil
	return p
}

// String is Filter for one whole message.
func String(s string) string {
	var f Filter
	out := f.Bytes([]byte(s))
	return string(append(out, f.Flush()...))
}
