package githubtest

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
)

// faults are the hooks that spoil an answer after its request took effect.
type faults struct {
	lose     func(method, path string, status int) bool
	replace  func(method, path string, status int) int
	lost     []Request
	replaced []Request
	// git spoils smart-HTTP requests (GitFaults).
	git        func(service string, r *http.Request) GitFault
	gitFaulted []Request
}

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
	s.faults.lose = f
}

// LostResponses lists the requests whose answer LoseResponse dropped, in order.
func (s *Server) LostResponses() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.faults.lost)
}

// ReplaceResponse installs f to run after each API request has been handled (nil removes it). When f returns
// a status (not 0), the handler's answer is replaced by an error with that status: the request took effect
// all the same, as when GitHub answers 502 or 504 to a write it applied but did not finish answering in time.
func (s *Server) ReplaceResponse(f func(method, path string, status int) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.replace = f
}

// ReplacedResponses lists the requests whose answer ReplaceResponse replaced, with their real status.
func (s *Server) ReplacedResponses() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.faults.replaced)
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

// holdResponse wraps w in a heldWriter while a fault hook is installed.
func (s *Server) holdResponse(w http.ResponseWriter) http.ResponseWriter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.lose == nil && s.faults.replace == nil {
		return w
	}
	return &heldWriter{ResponseWriter: w}
}

// settleResponse sends a held answer, or spoils it as the fault hooks say.
func (s *Server) settleResponse(w http.ResponseWriter, method, path string) {
	hw, ok := w.(*heldWriter)
	if !ok {
		return
	}
	if hw.status == 0 {
		hw.status = http.StatusOK
	}
	s.mu.Lock()
	lose, replace := s.faults.lose, s.faults.replace
	s.mu.Unlock()
	req := Request{Method: method, Path: path, Status: hw.status}
	if lose != nil && lose(method, path, hw.status) {
		s.mu.Lock()
		s.faults.lost = append(s.faults.lost, req)
		s.mu.Unlock()
		// net/http closes the connection without writing anything that was not flushed.
		panic(http.ErrAbortHandler)
	}
	if replace != nil {
		if status := replace(method, path, hw.status); status != 0 {
			s.mu.Lock()
			s.faults.replaced = append(s.faults.replaced, req)
			s.mu.Unlock()
			writeJSON(hw.ResponseWriter, status, errorBody(fmt.Sprintf("githubtest: an injected %d (the request took effect)", status)))
			return
		}
	}
	hw.ResponseWriter.WriteHeader(hw.status)
	_, _ = hw.ResponseWriter.Write(hw.body.Bytes())
}

// GitFault is what happens to one smart-HTTP request (see GitFaults).
type GitFault struct {
	// Status, when not 0, answers the request with this status before git sees it (the request does
	// nothing), with RetryAfter as its Retry-After header when set.
	Status     int
	RetryAfter string
	// Lose lets git do the work (a push lands) and then closes the connection without an answer.
	Lose bool
}

// GitFaults installs f to run on each smart-HTTP request (GitHTTP; nil removes it): service is the path
// after /<owner>/<repo>.git/ ("info/refs", "git-upload-pack", "git-receive-pack"). Faults on git, as
// Intercept and LoseResponse are on the API; every request f spoils is listed by GitFaulted.
func (s *Server) GitFaults(f func(service string, r *http.Request) GitFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.git = f
}

// GitFaulted lists the smart-HTTP requests GitFaults spoiled: Status is the injected status, or 0 for an
// answer lost.
func (s *Server) GitFaulted() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.faults.gitFaulted)
}

// gitFault applies the installed git fault to one smart-HTTP request: it answers it (true) or returns the
// writer serve must use, which drops its answer when the fault says so (lose).
func (s *Server) gitFault(w http.ResponseWriter, r *http.Request, service string) (http.ResponseWriter, bool, bool) {
	s.mu.Lock()
	f := s.faults.git
	s.mu.Unlock()
	if f == nil {
		return w, false, false
	}
	ft := f(service, r)
	switch {
	case ft.Status != 0:
		s.mu.Lock()
		s.faults.gitFaulted = append(s.faults.gitFaulted, Request{Method: r.Method, Path: r.URL.Path, Status: ft.Status})
		s.mu.Unlock()
		if ft.RetryAfter != "" {
			w.Header().Set("Retry-After", ft.RetryAfter)
		}
		http.Error(w, fmt.Sprintf("githubtest: an injected %d", ft.Status), ft.Status)
		return w, true, false
	case ft.Lose:
		s.mu.Lock()
		s.faults.gitFaulted = append(s.faults.gitFaulted, Request{Method: r.Method, Path: r.URL.Path})
		s.mu.Unlock()
		return &heldWriter{ResponseWriter: w}, false, true
	}
	return w, false, false
}
