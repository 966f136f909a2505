package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// eventParser reads one CLI's machine-readable output (JSON Lines), one line at a time.
type eventParser interface {
	// event handles one line of output and returns the readable progress lines it makes, if any. A line
	// that is not a JSON object (a warning on stderr) is shown as it is by the caller.
	event(line []byte) []string
	// usage is what the output has reported so far.
	usage() Usage
}

// limits are agent.max_turns and agent.max_cost; zero means none.
type limits struct {
	MaxTurns int
	MaxCost  float64
}

// stream copies a CLI's output to the log as readable lines, keeps its usage, and closes stop once when
// the reported usage goes over a limit.
type stream struct {
	parser eventParser
	limits limits
	stop   chan struct{}

	mu      sync.Mutex
	stopped bool
	final   Usage
}

func newStream(p eventParser, l limits) *stream {
	if p == nil {
		return nil
	}
	return &stream{parser: p, limits: l, stop: make(chan struct{})}
}

// maxLine bounds one line kept in memory; a longer JSON line (a huge tool result) is skipped.
const maxLine = 8 << 20

func (s *stream) copy(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			s.line(w, line)
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

func (s *stream) line(w io.Writer, line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		_, _ = w.Write(append(bytes.TrimRight(line, "\r\n"), '\n'))
		return
	}
	for _, l := range s.parser.event(trimmed) {
		_, _ = io.WriteString(w, l+"\n")
	}
	s.check()
}

// check stops the agent when its usage so far is over a limit.
func (s *stream) check() {
	u := s.parser.usage()
	over := s.limits.MaxCost > 0 && u.CostUSD > s.limits.MaxCost
	turns := s.limits.MaxTurns > 0 && u.Turns > s.limits.MaxTurns
	if !over && !turns {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.stopped = true
	s.final = u
	s.final.OverBudget = s.final.OverBudget || over
	s.final.HitTurnLimit = s.final.HitTurnLimit || turns
	close(s.stop)
}

// usage is the run's usage; after ralph stopped the agent at a limit, what was reported up to that point.
func (s *stream) usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		u := s.parser.usage()
		u.OverBudget = u.OverBudget || s.final.OverBudget
		u.HitTurnLimit = u.HitTurnLimit || s.final.HitTurnLimit
		if s.final.HitTurnLimit && u.Turns > s.limits.MaxTurns {
			// The turn that went over was cut off before it did anything ralph keeps.
			u.Turns = s.limits.MaxTurns
		}
		return u
	}
	return s.parser.usage()
}

// oneLine shortens text to one line of at most n runes, for a progress line.
func oneLine(text string, n int) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i]) + " …"
	}
	if utf8.RuneCountInString(text) > n {
		r := []rune(text)
		text = string(r[:n]) + "…"
	}
	return text
}
