package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// SECURITY: the agent's output and the text ralph quotes reach a person's terminal with no control
// character or escape sequence that the terminal would act on, however the output is cut into writes.
func TestTerminalGetsNoEscapes(t *testing.T) {
	hostile := "ok\x1b]52;c;ZXZpbA==\x07 \x1b[2J\rhidden\x1b]8;;https://evil\x1b\\link\u009b31m\x7f\tend\n"
	for _, size := range []int{1, 2, 3, 7, len(hostile)} {
		var buf bytes.Buffer
		l := newTermLog(&buf, false, func() time.Time { return time.Time{} })
		w, end := l.Untrusted("agent")
		for i := 0; i < len(hostile); i += size {
			j := min(i+size, len(hostile))
			if _, err := w.Write([]byte(hostile[i:j])); err != nil {
				t.Fatal(err)
			}
		}
		end()
		l.Infof("refused `%s`", "a\x1b[31mname\r")
		got := buf.String()
		if strings.ContainsAny(got, "\x1b\x07\r\x7f\u009b") {
			t.Errorf("writes of %d bytes: a control character reached the terminal: %q", size, got)
		}
		for _, want := range []string{"ok^[]52;c;ZXZpbA==^G ^[[2J^Mhidden", "link^[[31m^?\tend", "refused `a^[[31mname^M`"} {
			if !strings.Contains(got, want) {
				t.Errorf("writes of %d bytes: %q does not show %q", size, got, want)
			}
		}
	}
}
