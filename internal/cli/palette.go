package cli

import "strings"

// ralph's palette, one for every command (colorizer, status.go): what went well and its ✓ green, what
// failed and its ✗ (X) red, warnings ("warning:", "!", a gate waiting for a person) yellow, secondary text
// (the progress line, a section's end, "nothing to do") dim, a step under way cyan. A colorizer that is
// off writes no escape code at all: off a terminal, and with NO_COLOR (gh's rules: Factory.Color for
// standard output, Factory.ErrColor for standard error).

func (c colorizer) ok(s string) string   { return c.wrap("32", s) }
func (c colorizer) fail(s string) string { return c.wrap("31", s) }
func (c colorizer) dim(s string) string  { return c.wrap("2", s) }

// marked colours a line's leading mark ("✓ …", "! …", "X …", "✗ …") as the palette says.
func (c colorizer) marked(line string) string {
	mark, rest, ok := strings.Cut(line, " ")
	if !ok {
		return line
	}
	switch mark {
	case "✓":
		mark = c.ok(mark)
	case "X", "✗":
		mark = c.fail(mark)
	case "!", "⏸", "$":
		mark = c.warn(mark)
	case "■", "·", "…", "?":
		mark = c.dim(mark)
	}
	return mark + " " + rest
}
