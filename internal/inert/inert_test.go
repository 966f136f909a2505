package inert

import "testing"

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text, é and ✓\n\tindented", "plain text, é and ✓\n\tindented"},
		{"\x1b]0;title\x07", "^[]0;title^G"},
		{"\x1b[2J\rover", "^[[2J^Mover"},
		{"\u009b31m", "^[[31m"},
		{"del\x7f", "del^?"},
		// What reorders the text after it is shown by its code point: an override, an isolate, a mark,
		// a line separator. Right-to-left text itself is kept.
		{"fix \u202etxt.exe\u202c ok", "fix <U+202E>txt.exe<U+202C> ok"},
		{"\u2067a\u2069 \u200fb \u2028c", "<U+2067>a<U+2069> <U+200F>b <U+2028>c"},
		{"שלום", "שלום"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A C1 control cut between two writes is still caught; an unfinished character at the end is flushed.
func TestFilterAcrossWrites(t *testing.T) {
	t.Parallel()
	var f Filter
	got := string(f.Bytes([]byte("a\xc2"))) + string(f.Bytes([]byte("\x9bJ\xe2\x9c"))) + string(f.Flush())
	if want := "a^[[J\xe2\x9c"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
