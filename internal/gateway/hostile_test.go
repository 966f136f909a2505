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
