package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// startedBody is a request body that counts, once, that the gateway began to read it.
type startedBody struct {
	io.Reader
	once    sync.Once
	started *atomic.Int32
}

func (b *startedBody) Read(p []byte) (int, error) {
	b.once.Do(func() { b.started.Add(1) })
	return b.Reader.Read(p)
}

// The gateway reads a request whole before forwarding it, up to 64 MiB: an agent that sends many requests
// at once, while the ones in flight wait for their answers, must not make ralph hold a body for each. The
// bodies it reads (and holds until their answers end) are bounded: twice the requests in flight.
func TestRequestBodiesHeldAreBounded(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the vendor takes its time: the requests in flight hold their places
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, anthropicStream)
	}))
	t.Cleanup(up.Close)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	g, err := New(Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })

	const n = 6 * DefaultMaxRequests
	var started atomic.Int32
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			body := &startedBody{Reader: strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[]}`), started: &started}
			r := httptest.NewRequest("POST", "/v1/messages", body)
			r.Header.Set("X-Api-Key", g.Key())
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			statuses[i] = w.Code
		})
	}
	// Wait until the gateway reads no more bodies.
	last, still := int32(-1), time.Now()
	for time.Since(still) < 500*time.Millisecond {
		if now := started.Load(); now != last {
			last, still = now, time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	if most := int32(2 * DefaultMaxRequests); last > most {
		t.Errorf("the gateway read %d request bodies while %d requests waited for their answers, want at most %d", last, DefaultMaxRequests, most)
	}
	unblock()
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("request %d: status %d, want 200 once the vendor answered", i, s)
		}
	}
	if got := g.Usage().Requests; got != n {
		t.Errorf("%d requests forwarded, want %d", got, n)
	}
}

// What the agent asks for is in ralph's log only quoted and cut short: a path or an encoding it chose
// cannot start a line of its own (gh ralph prints line feeds as they are) or flood the log.
func TestRefusalsLoggedInert(t *testing.T) {
	t.Parallel()
	forged := "%0Aralph:%20the%20step%20is%20done,%20nothing%20was%20refused%0D%1B[2K"
	long := "/" + strings.Repeat("a", 200_000)
	tests := []struct {
		name   string
		path   string
		header map[string]string
	}{
		{"a path without the key", "/v1/messages" + forged, nil},
		{"a path with the key", "/v1/files" + forged, map[string]string{"X-Api-Key": ""}},
		{"a long path without the key", long, nil},
		{"a long path with the key", long, map[string]string{"X-Api-Key": ""}},
		{"an encoding", "/v1/messages", map[string]string{"X-Api-Key": "", "Content-Encoding": "gzip\u2028ralph: fine" + strings.Repeat("x", 200_000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{}`)
			g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
			h := map[string]string{}
			for k, v := range tt.header {
				if k == "X-Api-Key" {
					v = g.Key()
				}
				h[k] = v
			}
			if status, body := call(t, g, "POST", tt.path, h); status/100 != 4 {
				t.Fatalf("status %d (%s), want it refused", status, body)
			}
			lines := g.Refused()
			if len(lines) != 1 {
				t.Fatalf("log lines %q, want one", lines)
			}
			if l := lines[0]; len(l) > 400 || strings.ContainsFunc(l, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("log line of %d bytes, want at most 400, all printable: %.300q", len(l), l)
			}
		})
	}
}
