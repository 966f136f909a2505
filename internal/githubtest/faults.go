package githubtest

import (
	"bytes"
	"net/http"
	"slices"
)

// LoseResponse installs f to run after each API request has been handled (nil removes it). When f returns
// true the server closes the connection without answering: the request took effect on the server, but the
// client never learns its outcome, as when a response is lost on the network. For fault injection; Intercept
// is the hook for faults where the server does nothing.
//
// While f is installed, every answer is held back until the handler has finished, so that f can still drop
// it whole.
func (s *Server) LoseResponse(f func(method, path string, status int) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose = f
}

// LostResponses lists the requests whose answer LoseResponse dropped, in order.
func (s *Server) LostResponses() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lost)
}

// heldWriter keeps a handler's answer (status and body) until settleResponse decides to send or drop it.
// The headers go to the real writer's map at once: they are only sent with the status.
type heldWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *heldWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *heldWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// holdResponse wraps w in a heldWriter while a LoseResponse hook is installed.
func (s *Server) holdResponse(w http.ResponseWriter) http.ResponseWriter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lose == nil {
		return w
	}
	return &heldWriter{ResponseWriter: w}
}

// settleResponse sends a held answer, or drops it and the connection when the LoseResponse hook says so.
func (s *Server) settleResponse(w http.ResponseWriter, method, path string) {
	hw, ok := w.(*heldWriter)
	if !ok {
		return
	}
	s.mu.Lock()
	lose := s.lose
	s.mu.Unlock()
	if lose != nil && lose(method, path, hw.status) {
		s.mu.Lock()
		s.lost = append(s.lost, Request{Method: method, Path: path, Status: hw.status})
		s.mu.Unlock()
		// net/http closes the connection without writing anything that was not flushed.
		panic(http.ErrAbortHandler)
	}
	if hw.status == 0 {
		hw.status = http.StatusOK
	}
	hw.ResponseWriter.WriteHeader(hw.status)
	_, _ = hw.ResponseWriter.Write(hw.body.Bytes())
}
