package gateway

import (
	"io"
	"math"
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

// Anthropic bills a prompt written to its cache for an hour (cache_control's "ttl": "1h", which any
// request may set) at twice the input price, not the five-minute write's 1.25 times: the answer's usage
// says how many of its cache writes were which, and each is priced at its own.
func TestHourCacheWritesPriced(t *testing.T) {
	t.Parallel()
	sonnet := DefaultPrices(Anthropic)["claude-sonnet-4-5"]
	start5m := func(usage string) string {
		return "event: message_start\n" +
			`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5-20250929","usage":` + usage + `}}` + "\n\n" +
			"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":10}}` + "\n\n"
	}
	tests := []struct {
		name, ct, body string
		want           float64 // dollars
	}{
		{"an hour's writes, streamed", "text/event-stream",
			start5m(`{"input_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1000},"output_tokens":1}`),
			(100*sonnet.Input + 1000*2*sonnet.Input + 10*sonnet.Output) / 1e6},
		{"both kinds, streamed", "text/event-stream",
			start5m(`{"input_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":400,"ephemeral_1h_input_tokens":600},"output_tokens":1}`),
			(100*sonnet.Input + 400*sonnet.CacheWrite + 600*2*sonnet.Input + 10*sonnet.Output) / 1e6},
		{"five minutes' writes", "text/event-stream",
			start5m(`{"input_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0},"output_tokens":1}`),
			(100*sonnet.Input + 1000*sonnet.CacheWrite + 10*sonnet.Output) / 1e6},
		{"an hour's writes, whole", "application/json",
			`{"id":"msg_1","type":"message","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1000},"output_tokens":10}}`,
			(100*sonnet.Input + 1000*2*sonnet.Input + 10*sonnet.Output) / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.ct, tt.body)
			g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
			if status, body := post(t, g, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`); status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			g.Close()
			if got := g.Usage().CostUSD; math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("metered $%.6f, want $%.6f", got, tt.want)
			}
		})
	}
}

// Anthropic's fast mode ("speed": "fast") bills the same model's tokens at six times its list prices,
// which no answer's usage says: the gateway refuses it, as it refuses OpenAI's priority tier.
func TestFastModeRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		speed string
		want  int
	}{
		{`"fast"`, 400},
		{`"FAST"`, 400},
		{`"turbo"`, 400},
		{`1`, 400},
		{`"standard"`, 200},
		{`null`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.speed, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "text/event-stream", anthropicStream)
			g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
			status, body := post(t, g, "/v1/messages", `{"model":"claude-opus-4-6","max_tokens":10,"speed":`+tt.speed+`,"messages":[{"role":"user","content":"hi"}]}`)
			if status != tt.want {
				t.Errorf("status %d (%s), want %d", status, body, tt.want)
			}
			if n := len(up.requests()); tt.want != 200 && n != 0 {
				t.Errorf("%d requests in fast mode reached the vendor", n)
			}
		})
	}
}
