package action

import (
	"bytes"
	"strings"
	"testing"
)

// SECURITY: off a runner, the agent's output reaches the terminal with no control character and no
// workflow command line, however it is cut into writes.
func TestByHandOutputInert(t *testing.T) {
	t.Parallel()
	hostile := "\x1b]0;title\x07\x1b[2J ok\n::add-mask::x\n  \t::set-output name=a::b\nlog ##[error]e ###[x # ok\n:: \n: one\n::half"
	want := "^[]0;title^G^[[2J ok\n:\u200b:add-mask::x\n  \t:\u200b:set-output name=a::b\nlog #\u200b#[error]e ##\u200b#[x # ok\n:\u200b: \n: one\n:\u200b:half\n"
	for _, size := range []int{1, 2, 3, 5, len(hostile)} {
		var buf bytes.Buffer
		o := newByHandOutput(&buf)
		for i := 0; i < len(hostile); i += size {
			if _, err := o.Write([]byte(hostile[i:min(i+size, len(hostile))])); err != nil {
				t.Fatal(err)
			}
		}
		o.end()
		if got := buf.String(); got != want {
			t.Errorf("writes of %d bytes: got %q, want %q", size, got, want)
		}
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.Contains(line, "##[") {
				t.Errorf("writes of %d bytes: a workflow command line: %q", size, line)
			}
		}
	}
}

// A message off a runner (a warning quoting an issue's title, say) is inert too.
func TestPlainReportInert(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	plainReport{out: &buf}.Warningf("title %q", "a\x1b[31m\n::error::b")
	if got, want := buf.String(), "warning: title \"a\\x1b[31m\\n::error::b\"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	buf.Reset()
	plainReport{out: &buf}.Infof("title %s", "a\x1b[31m\n::error::b")
	if got, want := buf.String(), "title a^[[31m\n:\u200b:error::b\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
