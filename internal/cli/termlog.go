package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/view"
)

// termLog is the engine's logger on a terminal (or a pipe). Messages and the agent's output go to stderr;
// data goes to stdout elsewhere. On a terminal, while a group (an agent or verify run) is open, a status
// line with a spinner and the elapsed time is redrawn below the output and cleared before more output is
// written or when the group ends. Off a terminal it writes plain lines.
type termLog struct {
	w   io.Writer
	tty bool
	now func() time.Time
	// color is the palette on the log's stream (off: no escape code).
	color colorizer
	// interrupted says whether the run was interrupted (Ctrl-C): a group that ends then is marked so. nil:
	// never.
	interrupted func() bool
	// meter is what the open group's agent has used so far (its model gateway's tokens and cost), shown in
	// the status line; nil: nothing to show.
	meter func() (tokens int, costUSD float64)

	mu      sync.Mutex
	title   string
	started time.Time
	shown   bool // the status line is on screen
	atBOL   bool // the last byte written was a newline (or nothing was written)
	frame   int
	safe    inert.Filter // the agent's output, made harmless to the terminal (control characters shown in caret notation)
	stop    chan struct{}
	done    chan struct{}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// termLog is the engine's log on the command's stderr, in ralph's palette when stderr shows colour.
func (f *Factory) termLog() *termLog {
	l := newTermLog(f.Stderr, f.StderrTTY, f.Now)
	l.color = colorizer(f.ErrColor)
	return l
}

func newTermLog(w io.Writer, tty bool, now func() time.Time) *termLog {
	if now == nil {
		now = time.Now
	}
	return &termLog{w: w, tty: tty, now: now, atBOL: true}
}

func (l *termLog) Infof(format string, args ...any) { l.line("", format, args...) }
func (l *termLog) Warnf(format string, args ...any) {
	l.line(l.color.warn("warning:")+" ", format, args...)
}

func (l *termLog) line(prefix, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	if !l.atBOL {
		fmt.Fprintln(l.w)
	}
	fmt.Fprintf(l.w, "%s%s\n", prefix, inert.String(fmt.Sprintf(format, args...)))
	l.atBOL = true
	l.draw()
}

// Output receives the agent's output.
func (l *termLog) Output() io.Writer { return termOutput{l} }

// Untrusted is a section of the agent's (or a verify command's) output.
func (l *termLog) Untrusted(title string) (io.Writer, func()) {
	end := l.Group(title)
	return termOutput{l}, end
}

type termOutput struct{ l *termLog }

func (o termOutput) Write(p []byte) (int, error) {
	l := o.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	safe := l.safe.Bytes(p)
	if _, err := l.w.Write(safe); err != nil {
		return 0, err
	}
	if len(safe) > 0 {
		l.atBOL = safe[len(safe)-1] == '\n'
	}
	l.draw()
	return len(p), nil
}

// Group starts a titled section; on a terminal the status line runs until the returned function is called.
func (l *termLog) Group(title string) func() {
	l.mu.Lock()
	l.clear()
	if !l.atBOL {
		fmt.Fprintln(l.w)
		l.atBOL = true
	}
	l.title, l.started = title, l.now()
	if !l.tty {
		fmt.Fprintf(l.w, "== %s\n", title)
		l.mu.Unlock()
		return func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if !l.atBOL {
				fmt.Fprintln(l.w)
				l.atBOL = true
			}
			fmt.Fprintf(l.w, "== %s: %s\n", title, l.ended(l.now().Sub(l.started)))
		}
	}
	fmt.Fprintf(l.w, "▶ %s\n", title)
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	stop, done := l.stop, l.done
	l.draw()
	l.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.frame++
				l.clear()
				l.draw()
				l.mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			l.mu.Lock()
			defer l.mu.Unlock()
			l.clear()
			if !l.atBOL {
				fmt.Fprintln(l.w)
				l.atBOL = true
			}
			// The end of a group, not its outcome (which the engine's log and the result say): an agent or
			// a verify command that failed is no ✓, and one that was interrupted says so.
			mark := l.color.dim("■")
			if l.isInterrupted() {
				mark = l.color.fail("✗")
			}
			fmt.Fprintf(l.w, "%s %s: %s\n", mark, title, l.ended(l.now().Sub(l.started)))
			l.title, l.stop, l.done, l.meter = "", nil, nil, nil
		})
	}
}

func (l *termLog) isInterrupted() bool { return l.interrupted != nil && l.interrupted() }

// ended is how long a group ran, and whether it was interrupted.
func (l *termLog) ended(d time.Duration) string {
	if l.isInterrupted() {
		return "interrupted after " + view.Elapsed(d)
	}
	return view.Elapsed(d)
}

// clear removes the status line; the caller holds mu.
func (l *termLog) clear() {
	if l.shown {
		io.WriteString(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// draw shows the status line when a group is open and the cursor is at the start of a line; the caller
// holds mu.
func (l *termLog) draw() {
	if !l.tty || l.stop == nil || !l.atBOL {
		return
	}
	fmt.Fprintf(l.w, "%s %s", spinner[l.frame%len(spinner)], l.color.dim(fmt.Sprintf("%s — %s%s", l.title, view.Elapsed(l.now().Sub(l.started)), l.metered())))
	l.shown = true
}

// Meter shows in the open group's status line what meter says the agent has used so far: the step's model
// gateway knows its tokens and cost as they go. The group's end forgets it.
func (l *termLog) Meter(meter func() (tokens int, costUSD float64)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.meter = meter
}

// metered is the status line's tokens and cost so far; the caller holds mu.
func (l *termLog) metered() string {
	if l.meter == nil {
		return ""
	}
	tokens, cost := l.meter()
	if tokens == 0 && cost == 0 {
		return ""
	}
	return fmt.Sprintf(" · %s tokens · $%.4f", agent.Thousands(tokens), cost)
}
