package agenttest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// script is what every scripted model has: its server, what it asks the CLI to write, and what it saw.
type script struct {
	URL      string // the base URL the CLI is pointed at
	key      string // the API key the CLI must send
	artifact string // the absolute path the model asks to write ("": the path the prompt names)
	content  string // what it writes
	// write, when set, gives each agent step's path and content from its request instead.
	write    func(request string) (path, content string)
	mu       sync.Mutex
	turns    int      // agent turns answered
	problems []string // requests the script did not expect
	billed   Billed
	seen     []string // the bodies of the requests it was sent
}

// read reads a request's body and keeps it.
func (s *script) read(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, string(b))
	return b
}

// Seen is the bodies of the requests the model was sent, in order.
func (s *script) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Billed is what a scripted model billed, over every answer it gave (side requests included).
type Billed struct {
	Requests     int
	InputTokens  int // cached ones included
	CachedTokens int
	OutputTokens int
}

// Billed is what the model billed so far.
func (s *script) Billed() Billed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.billed
}

// bill counts one answer, billed at the fixed usage of every answer.
func (s *script) bill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.billed.Requests++
	s.billed.InputTokens += InputTokens
	s.billed.CachedTokens += CachedTokens
	s.billed.OutputTokens += OutputTokens
}

// start serves h on loopback until the test ends.
func (s *script) start(t testing.TB, h http.HandlerFunc) {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
}

// Turns is how many agent turns the model answered.
func (s *script) Turns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

// Problems lists what the script did not expect of the CLI's requests.
func (s *script) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

func (s *script) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// turn counts an agent turn and returns its number, from 1.
func (s *script) turn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	return s.turns
}
