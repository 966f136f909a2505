package action

import (
	"io"

	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// byHandOutput is the agent's output (or a verify command's) when the Action's door runs off a runner, on a
// person's terminal or in another CI's log: no control character reaches it raw (inert), and no line of it
// is a workflow command (a log that reads them would act on it): "::" at a line's start, after spaces, and
// "##[" anywhere get a zero-width space between their two first characters, as plain does for ralph's own
// lines. The output streams: only a ":" at a line's start or a "#" or two are held until the next byte
// says what they begin, and end gives them back.
type byHandOutput struct {
	w         io.Writer
	lineStart bool   // nothing but spaces and tabs since the last line break (or since the start)
	held      string // ":" at a line's start, "#" or "##"
	last      byte   // the last byte written
	safe      inert.Filter
}

func newByHandOutput(w io.Writer) *byHandOutput {
	return &byHandOutput{w: w, lineStart: true, last: '\n'}
}

func (o *byHandOutput) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+8)
	for _, c := range p {
		switch o.held {
		case ":":
			o.held = ""
			if c == ':' {
				out = append(out, ":\u200b:"...)
				o.lineStart = false
				continue
			}
			out = append(out, ':')
			o.lineStart = false
		case "#":
			if c == '#' {
				o.held = "##"
				continue
			}
			o.held = ""
			out = append(out, '#')
		case "##":
			switch c {
			case '[':
				o.held = ""
				out = append(out, "#\u200b#["...)
				continue
			case '#':
				out = append(out, '#')
				continue
			}
			o.held = ""
			out = append(out, "##"...)
		}
		switch {
		case c == '\n':
			o.lineStart = true
			out = append(out, c)
		case (c == ' ' || c == '\t') && o.lineStart:
			out = append(out, c)
		case c == ':' && o.lineStart:
			o.held = ":"
		case c == '#':
			o.held = "#"
			o.lineStart = false
		default:
			o.lineStart = false
			out = append(out, c)
		}
	}
	return len(p), o.write(o.safe.Bytes(out))
}

func (o *byHandOutput) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	o.last = b[len(b)-1]
	_, err := o.w.Write(b)
	return err
}

// end writes what was held, and ends the output's last line.
func (o *byHandOutput) end() {
	held := o.held
	o.held = ""
	_ = o.write(append(o.safe.Bytes([]byte(held)), o.safe.Flush()...))
	if o.last != '\n' {
		_ = o.write([]byte{'\n'})
	}
}
