package prompts

import (
	"fmt"
	"regexp"
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

// Removed counts what Clean took out of a text because GitHub does not show it to a reader.
type Removed struct {
	Comments  int // HTML comments
	LinkDefs  int // Markdown link-reference definitions (or, for one the text links to, its title)
	Invisible int // zero-width, bidirectional control, tag and other control characters
}

// Add sums two counts.
func (r Removed) Add(o Removed) Removed {
	return Removed{Comments: r.Comments + o.Comments, LinkDefs: r.LinkDefs + o.LinkDefs, Invisible: r.Invisible + o.Invisible}
}

// String says what was removed, "" when nothing was: "1 HTML comment, 2 link-reference definitions".
func (r Removed) String() string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(r.Comments, "HTML comment", "HTML comments")
	add(r.LinkDefs, "link-reference definition", "link-reference definitions")
	add(r.Invisible, "invisible or control character", "invisible or control characters")
	return strings.Join(parts, ", ")
}

// Clean makes text written by GitHub users safe to quote in a prompt: invalid UTF-8 is replaced, what a
// person reading the issue on GitHub would not see is removed (HTML comments, link-reference definitions,
// zero-width, bidirectional control, tag and other control characters), and text longer than max bytes is
// cut with a note that says so. It also says what it removed, so the prompt can say that something was.
func Clean(s string, max int) (string, Removed) {
	var rm Removed
	s = strings.ToValidUTF8(s, "\uFFFD")
	s, rm.Comments = stripHTMLComments(s)
	s = strings.Map(func(r rune) rune {
		if hidden(r) {
			rm.Invisible++
			return -1
		}
		return r
	}, s)
	s, rm.LinkDefs = stripLinkDefinitions(s)
	if max > 0 && len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("\n[… truncated by ralph: the text is %d bytes; only the first %d are shown]", len(s), cut)
	}
	return s, rm
}

// stripHTMLComments removes <!-- … --> (GitHub does not render them); an unterminated one runs to the end.
func stripHTMLComments(s string) (string, int) {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			b.WriteString(s)
			return b.String(), n
		}
		n++
		b.WriteString(s[:i])
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			return b.String(), n
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

var (
	// fence opens or closes a fenced code block, whose content GitHub shows as it is.
	fence = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	// container is what may stand before a definition on its line: indentation, block quote markers and
	// list markers (a definition inside a quote or a list item is not shown either).
	container = regexp.MustCompile(`^(?:[ \t]*(?:>|[-*+][ \t]|\d{1,9}[.)][ \t]))*[ \t]*`)
	quoteMark = regexp.MustCompile(`^[ \t]*(?:>[ \t]?)+`)
)

// stripLinkDefinitions removes Markdown link-reference definitions, `[label]: destination "title"`, which
// GitHub does not render: `[//]: # (…)` and `[x]: <> (…)` are common ways to hide text in an issue. A
// definition the text links to keeps its label and destination (the link a reader follows), not its title
// (shown only on hover). Fenced code blocks are left as they are: GitHub shows them. It errs on the side of
// removing: a definition-shaped line inside a paragraph, which GitHub would show, goes too.
func stripLinkDefinitions(s string) (string, int) {
	if !strings.Contains(s, "]:") {
		return s, 0
	}
	lines := strings.SplitAfter(s, "\n")
	type def struct {
		first, next int // the lines it spans: [first, next)
		prefix      string
		label, dest string
	}
	var defs []def
	var open string // the fence of the code block we are in, "" outside one
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open = m[1]
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), m[1][:1])) == "":
				open = ""
			}
			continue
		}
		if open != "" {
			continue
		}
		prefix := container.FindString(line)
		// A definition cannot hold a blank line: it ends at the next one.
		end := i + 1
		for end < len(lines) && strings.TrimSpace(strings.TrimLeft(lines[end], "> \t")) != "" {
			end++
		}
		var chunk strings.Builder
		chunk.WriteString(line[len(prefix):])
		for _, l := range lines[i+1 : end] {
			if strings.Contains(prefix, ">") {
				l = strings.TrimPrefix(l, quoteMark.FindString(l))
			}
			chunk.WriteString(l)
		}
		label, dest, used, ok := parseLinkDefinition(chunk.String())
		if !ok {
			continue
		}
		// The definition ends at the end of a line: it spans that many whole lines.
		consumed := chunk.String()[:used]
		next := i + strings.Count(consumed, "\n")
		if !strings.HasSuffix(consumed, "\n") {
			next++
		}
		defs = append(defs, def{first: i, next: next, prefix: prefix, label: label, dest: dest})
		i = next - 1
	}
	if len(defs) == 0 {
		return s, 0
	}
	var rest strings.Builder
	at := 0
	for _, d := range defs {
		for _, l := range lines[at:d.first] {
			rest.WriteString(l)
		}
		at = d.next
	}
	for _, l := range lines[at:] {
		rest.WriteString(l)
	}
	text := strings.ToLower(rest.String())
	var b strings.Builder
	at = 0
	for _, d := range defs {
		for _, l := range lines[at:d.first] {
			b.WriteString(l)
		}
		at = d.next
		if d.dest != "" && d.dest != "#" && strings.Contains(text, "["+strings.ToLower(d.label)+"]") {
			b.WriteString(strings.TrimRight(d.prefix, " \t") + "[" + d.label + "]: " + d.dest + "\n")
		}
	}
	for _, l := range lines[at:] {
		b.WriteString(l)
	}
	return b.String(), len(defs)
}

// parseLinkDefinition reads a link-reference definition at the start of s (CommonMark 4.7): the label, the
// destination, and how many bytes the definition takes, through the end of its last line.
func parseLinkDefinition(s string) (label, dest string, used int, ok bool) {
	p := 0
	if p >= len(s) || s[p] != '[' {
		return "", "", 0, false
	}
	j := p + 1
	for ; j < len(s) && s[j] != ']'; j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			return "", "", 0, false
		}
	}
	if j >= len(s) || j+1 >= len(s) || s[j+1] != ':' {
		return "", "", 0, false
	}
	label = s[p+1 : j]
	if strings.TrimSpace(label) == "" || len(label) > 999 {
		return "", "", 0, false
	}
	p = skipBlank(s, j+2, true)
	if p < len(s) && s[p] == '<' {
		k := p + 1
		for ; k < len(s) && s[k] != '>'; k++ {
			switch s[k] {
			case '\\':
				k++
			case '\n', '<':
				return "", "", 0, false
			}
		}
		if k >= len(s) {
			return "", "", 0, false
		}
		dest, p = s[p+1:k], k+1
	} else {
		k := p
		for k < len(s) && s[k] > ' ' {
			k++
		}
		if k == p {
			return "", "", 0, false
		}
		dest, p = s[p:k], k
	}
	q := skipBlank(s, p, false)
	if q == len(s) || s[q] == '\n' {
		// The definition may end here, or take a title from the next line.
		end := min(q+1, len(s))
		t := skipBlank(s, end, false)
		if t < len(s) && strings.IndexByte(`"'(`, s[t]) >= 0 {
			if t2, ok := parseTitle(s, t); ok {
				if e := skipBlank(s, t2, false); e == len(s) || s[e] == '\n' {
					return label, dest, min(e+1, len(s)), true
				}
			}
		}
		return label, dest, end, true
	}
	if q > p && strings.IndexByte(`"'(`, s[q]) >= 0 {
		if t2, ok := parseTitle(s, q); ok {
			if e := skipBlank(s, t2, false); e == len(s) || s[e] == '\n' {
				return label, dest, min(e+1, len(s)), true
			}
		}
	}
	return "", "", 0, false
}

// parseTitle reads a link title ("…", '…' or (…)) at s[p]; it returns the index after its closing mark.
func parseTitle(s string, p int) (int, bool) {
	open := s[p]
	closer := open
	if open == '(' {
		closer = ')'
	}
	for k := p + 1; k < len(s); k++ {
		switch {
		case s[k] == '\\':
			k++
		case s[k] == closer:
			return k + 1, true
		case open == '(' && s[k] == '(':
			return 0, false
		}
	}
	return 0, false
}

// skipBlank skips spaces and tabs, and one line ending too when newline is true.
func skipBlank(s string, p int, newline bool) int {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if newline && p < len(s) && s[p] == '\n' {
		p++
		for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
	}
	return p
}
