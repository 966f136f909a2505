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
