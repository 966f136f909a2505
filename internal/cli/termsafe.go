package cli

import "unicode/utf8"

// termSafe is what ralph writes to a terminal of text that is not its own (the agent's output, a file's
// name in a message): a terminal acts on control characters and escape sequences (moving the cursor over
// what was printed, setting the clipboard with OSC 52, links with OSC 8, the window's title), so each one is
// shown as a caret-notation look-alike instead ("^[" for ESC). Line feeds and tabs are kept. pending holds a
// byte that may start a C1 control character (U+0080–U+009F) whose second byte comes in the next write.
type termSafe struct {
	pending []byte
}

// filter returns p with every control character but \n and \t made visible.
func (f *termSafe) filter(p []byte) []byte {
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
			} else {
				out = append(out, p[i:i+n]...)
			}
			i += n
		}
	}
	return out
}

// termString is termSafe for one whole message.
func termString(s string) string {
	var f termSafe
	out := f.filter([]byte(s))
	return string(append(out, f.pending...))
}
