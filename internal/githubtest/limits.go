package githubtest

import (
	"fmt"
	"net/http"
	"time"
)

// Limits are GitHub's rate limits, for tests of many runs at once; the zero value is none. GitHub's
// secondary limits (content-creating requests per minute, requests in flight at once) answer 403 with
// Retry-After; its primary limit (requests per token per hour) answers 403 with X-RateLimit-Remaining: 0
// and the reset time. Tests scale the windows down (Retry-After is in whole seconds: at least a second).
type Limits struct {
	// Writes is how many content-creating requests (POST, PATCH, PUT, DELETE to the REST API) one window
	// of Window takes; past it they are refused until the window ends. 0: no limit.
	Writes int
	Window time.Duration
	// InFlight is how many requests are answered at once; one more is refused (Retry-After: 1). 0: no limit.
	InFlight int
	// Primary is how many requests one token makes per PrimaryWindow; past it they are refused until the
	// window ends. 0: no limit.
	Primary       int
	PrimaryWindow time.Duration
}

// Refusal is a request the limits refused, and until when.
type Refusal struct {
	At, Until    time.Time
	Method, Path string
	Primary      bool
}

type limitState struct {
	writeStart  time.Time
	writes      int
	inFlight    int
	primary     map[string]*primaryWindow
	refusals    []Refusal
	insideAfter int // requests that arrived while an earlier refusal's window was open
}

type primaryWindow struct {
	start time.Time
	used  int
}

// SetLimits puts GitHub's rate limits on the server from now on.
func (s *Server) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
}

// Refusals are the requests the limits refused, in order.
func (s *Server) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refusal(nil), s.limitState.refusals...)
}

// InsideWindow counts the requests that arrived while an earlier refusal's window was still open: a
// client that honours every refusal (and holds its other requests back) sends none.
func (s *Server) InsideWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limitState.insideAfter
}

// limit applies the limits to a request; it answers a refusal itself and returns false, or counts the
// request in flight and returns a function to call once it is answered.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, path string) (done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, st := s.limits, &s.limitState
	if l == (Limits{}) {
		return func() {}, true
	}
	now := time.Now()
	for _, f := range st.refusals {
		if now.Before(f.Until) {
			st.insideAfter++
			break
		}
	}
	refuse := func(until time.Time, primary bool) (func(), bool) {
		st.refusals = append(st.refusals, Refusal{At: now, Until: until, Method: r.Method, Path: path, Primary: primary})
		if primary {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(until.Unix()))
			writeJSON(w, http.StatusForbidden, errorBody("API rate limit exceeded for installation."))
		} else {
			secs := int((until.Sub(now) + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", fmt.Sprint(max(secs, 1)))
			writeJSON(w, http.StatusForbidden, errorBody("You have exceeded a secondary rate limit. Please wait a few minutes before you try again."))
		}
		return nil, false
	}
	if l.Primary > 0 {
		if st.primary == nil {
			st.primary = map[string]*primaryWindow{}
		}
		tok := r.Header.Get("Authorization")
		p := st.primary[tok]
		if p == nil || now.Sub(p.start) >= l.PrimaryWindow {
			p = &primaryWindow{start: now}
			st.primary[tok] = p
		}
		if p.used >= l.Primary {
			// GitHub's reset is a whole second: the window ends at the next one.
			return refuse(p.start.Add(l.PrimaryWindow).Truncate(time.Second).Add(time.Second), true)
		}
		p.used++
	}
	if l.InFlight > 0 && st.inFlight >= l.InFlight {
		return refuse(now.Add(time.Second), false)
	}
	if l.Writes > 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
		if now.Sub(st.writeStart) >= l.Window {
			st.writeStart, st.writes = now, 0
		}
		if st.writes >= l.Writes {
			return refuse(st.writeStart.Add(l.Window), false)
		}
		st.writes++
	}
	st.inFlight++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.limitState.inFlight--
	}, true
}
