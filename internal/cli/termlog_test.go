package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/view"
)

func TestTermLog(t *testing.T) {
	tests := []struct {
		tty  bool
		want []string
		not  []string
	}{
		// On a terminal: a status line with a spinner and the elapsed time, cleared before output and at the end.
		{tty: true, want: []string{"▶ agent: research for #47\n", "⠋ agent: research for #47 — 0s", "\r\x1b[Kagent says hi\n", "\r\x1b[Kwarning: careful\n", "■ agent: research for #47: 1m12s\n"}, not: []string{"✓"}},
		// Off a terminal: plain lines only.
		{tty: false, want: []string{"== agent: research for #47\nagent says hi\nwarning: careful\n== agent: research for #47: 1m12s\n"}, not: []string{"\r", "\x1b", "⠋"}},
	}
	for _, tt := range tests {
		var buf lockedBuffer
		now := clock
		l := newTermLog(&buf, tt.tty, func() time.Time { return now })
		end := l.Group("agent: research for #47")
		if _, err := l.Output().Write([]byte("agent says hi\n")); err != nil {
			t.Fatal(err)
		}
		l.Warnf("careful")
		now = now.Add(72 * time.Second)
		end()
		got := buf.String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("tty=%v: output %q has no %q", tt.tty, got, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(got, w) {
				t.Errorf("tty=%v: output %q has %q", tt.tty, got, w)
			}
		}
		if tt.tty && strings.Count(got, "\r\x1b[K") < 3 {
			t.Errorf("the status line was not cleared before each write: %q", got)
		}
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		42 * time.Second: "42s", 72 * time.Second: "1m12s", 5*time.Hour + 3*time.Minute: "5h03m", 76 * time.Hour: "3d4h", 72 * time.Hour: "3d",
	} {
		if got := view.Elapsed(d); got != want {
			t.Errorf("view.Elapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

// A group that ends because the run was interrupted says so, and is not marked done.
func TestTermLogInterrupted(t *testing.T) {
	for _, tt := range []struct {
		tty  bool
		want string
	}{
		{true, "✗ agent: research for #47: interrupted after 8s\n"},
		{false, "== agent: research for #47: interrupted after 8s\n"},
	} {
		var buf lockedBuffer
		now := clock
		l := newTermLog(&buf, tt.tty, func() time.Time { return now })
		interrupted := false
		l.interrupted = func() bool { return interrupted }
		end := l.Group("agent: research for #47")
		now = now.Add(8 * time.Second)
		interrupted = true
		end()
		if got := buf.String(); !strings.HasSuffix(got, tt.want) || strings.Contains(got, "✓") {
			t.Errorf("tty=%v: output %q does not end with %q (or marks the step done)", tt.tty, got, tt.want)
		}
	}
}

// While an agent runs, the status line shows the tokens and cost its gateway has metered so far.
func TestTermLogMeter(t *testing.T) {
	var buf lockedBuffer
	now := clock
	l := newTermLog(&buf, true, func() time.Time { return now })
	end := l.Group("agent: research for #47")
	tokens, cost := 0, 0.0
	l.Meter(func() (int, float64) { return tokens, cost })
	tokens, cost = 12345, 0.0412
	now = now.Add(9 * time.Second)
	l.Warnf("careful") // redraws the status line
	end()
	if got, want := buf.String(), "⠋ agent: research for #47 — 9s · 12,345 tokens · $0.0412"; !strings.Contains(got, want) {
		t.Errorf("output %q has no %q", got, want)
	}
	if l.meter != nil {
		t.Error("the group's end kept its meter")
	}
}
