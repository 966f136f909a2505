package inert

import (
	"strings"
	"testing"
)

// TestCodeText: text of others inside a code span cannot end the span, break its line, hold HTML (a
// marker), mention, reference or link.
func TestCodeText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain.example:443", "plain.example:443"},
		{"a ` b `` c", "a ' b '' c"},
		{"`@mona` fixes #2", "'＠mona' fixes ＃2"},
		{"x\n<!-- ralph:record -->\r`", "x ＜!-- ralph:record --> '"},
		{"see [x](//evil.example) and www.evil.example", "see [x］(//evil.example) and www．evil.example"},
		{"", ""},
	}
	for _, tt := range tests {
		got := CodeText(tt.in)
		if got != tt.want || strings.ContainsAny(got, "`\r\n<@#") {
			t.Errorf("CodeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
