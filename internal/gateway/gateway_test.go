package gateway

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// upstream is a vendor API stand-in: it answers every request with body (as content type ct) and keeps
// what it was sent.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newUpstream(t *testing.T, ct, body string) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Clone(r.Context()))
		u.mu.Unlock()
		w.Header().Set("Content-Type", ct)
		// In pieces, as a stream comes.
		for _, part := range strings.SplitAfter(body, "\n") {
			_, _ = io.WriteString(w, part)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

func start(t *testing.T, opts Options) *Gateway {
	t.Helper()
	g, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// call sends a request to the gateway with the given key header.
func call(t *testing.T, g *Gateway, method, path string, header map[string]string) (int, string) {
	t.Helper()
	body := `{"model":"m","stream":true}`
	if g.opts.Vendor == Gemini {
		body = `{"contents":[]}`
	}
	req, err := http.NewRequest(method, g.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	anthropicStream = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":600,"cache_creation_input_tokens":100,"cache_read_input_tokens":300,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":50}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	openaiStream = "event: response.created\n" +
		`data: {"type":"response.created","response":{"id":"r1","model":"gpt-5.1-codex","status":"in_progress"}}` + "\n\n" +
		"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","delta":"hi"}` + "\n\n" +
		"event: response.completed\n" +
		`data: {"type":"response.completed","response":{"id":"r1","model":"gpt-5.1-codex","status":"completed","usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":300},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":20}}}}` + "\n\n"
	geminiStream = `data: {"candidates":[{"content":{"parts":[{"text":"he"}]}}],"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":300},"modelVersion":"gemini-2.5-pro"}` + "\r\n\r\n" +
		`data: {"candidates":[{"content":{"parts":[{"text":"llo"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":300,"candidatesTokenCount":40,"thoughtsTokenCount":10},"modelVersion":"gemini-2.5-pro"}` + "\r\n\r\n"
)

// Every vendor's answer is metered as it streams through, cached and reasoning tokens included, and priced
// from the table; the agent gets the answer byte for byte; the vendor gets the real key and never the run's.
func TestMeteredStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		vendor    Vendor
		cred      Credential
		path      string
		keyHeader string // where the agent's CLI puts its key
		keyPrefix string
		stream    string
		realKey   func(h http.Header) string
		want      Tokens
		price     Price
		model     string
	}{
		{Anthropic, Credential{"ANTHROPIC_API_KEY", "sk-ant-real"}, "/v1/messages?beta=true", "X-Api-Key", "", anthropicStream,
			func(h http.Header) string { return h.Get("X-Api-Key") },
			Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50}, Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, "claude-sonnet-4-5-20250929"},
		{Anthropic, Credential{"CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat-real"}, "/v1/messages", "Authorization", "Bearer ", anthropicStream,
			func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
			Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50}, Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, "claude-sonnet-4-5-20250929"},
		{OpenAI, Credential{"OPENAI_API_KEY", "sk-real"}, "/v1/responses", "Authorization", "Bearer ", openaiStream,
			func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
			Tokens{Input: 1000, CacheRead: 300, Output: 50}, Price{Input: 1.25, Output: 10, CacheRead: 0.125}, "gpt-5.1-codex"},
		{Gemini, Credential{"GEMINI_API_KEY", "AIza-real"}, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", "X-Goog-Api-Key", "", geminiStream,
			func(h http.Header) string { return h.Get("X-Goog-Api-Key") },
			Tokens{Input: 1000, CacheRead: 300, Output: 50}, Price{Input: 1.25, Output: 10, CacheRead: 0.31}, "gemini-2.5-pro"},
	}
	for _, tt := range tests {
		t.Run(string(tt.vendor)+"/"+tt.cred.Name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "text/event-stream", tt.stream)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: tt.cred})
			status, body := call(t, g, "POST", tt.path, map[string]string{tt.keyHeader: tt.keyPrefix + g.Key(), "Accept-Encoding": "gzip", "Cookie": "c=1"})
			if status != 200 || body != tt.stream {
				t.Fatalf("answer = %d %q, want the stream as it came", status, body)
			}
			reqs := up.requests()
			if len(reqs) != 1 {
				t.Fatalf("the vendor got %d requests, want 1", len(reqs))
			}
			h := reqs[0].Header
			if got := tt.realKey(h); got != tt.cred.Value {
				t.Errorf("the vendor got the key %q, want ralph's %q", got, tt.cred.Value)
			}
			for k, v := range h {
				if strings.Contains(strings.Join(v, " "), g.Key()) {
					t.Errorf("the run's key reached the vendor in %s", k)
				}
			}
			if h.Get("Cookie") != "" {
				t.Errorf("a cookie reached the vendor")
			}
			u := g.Usage()
			if diff := cmp.Diff(tt.want, u.Tokens); diff != "" {
				t.Errorf("metered tokens (-want +got):\n%s", diff)
			}
			if want := tt.price.Cost(tt.want); math.Abs(u.CostUSD-want) > 1e-12 || want == 0 {
				t.Errorf("cost = %v, want %v", u.CostUSD, want)
			}
			if u.Requests != 1 || u.Model != tt.model || len(u.Unpriced) != 0 {
				t.Errorf("usage = %+v, want 1 request of %s, priced", u, tt.model)
			}
		})
	}
}

// A JSON answer (no stream) is metered at its end; a Gemini stream without alt=sse is a JSON array.
func TestMeteredJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		vendor Vendor
		path   string
		body   string
		want   Tokens
	}{
		{Anthropic, "/v1/messages", `{"id":"m","model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":7}}`, Tokens{Input: 15, CacheRead: 5, Output: 7}},
		// Server-side compaction bills a pass of its own, which only usage.iterations reports.
		{Anthropic, "/v1/messages", `{"id":"m","model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":7,"iterations":[{"type":"compaction","input_tokens":180000,"cache_read_input_tokens":20,"output_tokens":3000},{"type":"message","input_tokens":10,"output_tokens":7}]}}`, Tokens{Input: 180030, CacheRead: 20, Output: 3007}},
		{Anthropic, "/v1/messages", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-haiku-4-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7,\"iterations\":[{\"type\":\"compaction\",\"input_tokens\":180000,\"output_tokens\":3000},{\"type\":\"message\",\"input_tokens\":10,\"output_tokens\":7}]}}\n\n", Tokens{Input: 180010, Output: 3007}},
		{OpenAI, "/v1/responses", `{"id":"r","model":"gpt-5","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7}}`, Tokens{Input: 10, CacheRead: 4, Output: 7}},
		{Gemini, "/v1beta/models/gemini-2.5-flash:generateContent", `{"candidates":[],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":7,"toolUsePromptTokenCount":2},"modelVersion":"gemini-2.5-flash"}`, Tokens{Input: 12, Output: 7}},
		{Gemini, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", `[{"usageMetadata":{"promptTokenCount":10}},` + "\n" + `{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":7}}]`, Tokens{Input: 10, Output: 7}},
	}
	for _, tt := range tests {
		t.Run(string(tt.vendor)+tt.path, func(t *testing.T) {
			t.Parallel()
			ctype := "application/json"
			if strings.HasPrefix(tt.body, "event:") {
				ctype = "text/event-stream"
			}
			up := newUpstream(t, ctype, tt.body)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}})
			if status, body := call(t, g, "POST", tt.path, map[string]string{"Authorization": "Bearer " + g.Key()}); status != 200 || body != tt.body {
				t.Fatalf("answer = %d %q", status, body)
			}
			if diff := cmp.Diff(tt.want, g.Usage().Tokens); diff != "" {
				t.Errorf("metered tokens (-want +got):\n%s", diff)
			}
		})
	}
}

// Only the model: the gateway forwards the API paths the preset's CLI needs, with the run's key, and
// refuses anything else with 403 and a line for the log; nothing refused reaches the vendor.
func TestOnlyTheModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		vendor Vendor
		method string
		path   string
		key    bool
		want   int
	}{
		{Anthropic, "POST", "/v1/messages", true, 200},
		{Anthropic, "POST", "/v1/messages/count_tokens", true, 200},
		{Anthropic, "POST", "/v1/messages", false, 401},
		{Anthropic, "GET", "/v1/models", true, 403},
		{Anthropic, "GET", "/v1/messages", true, 403},
		{Anthropic, "POST", "/v1/files", true, 403},
		{Anthropic, "POST", "/v1/messages/batches", true, 403},
		{Anthropic, "POST", "/api/oauth/claude_cli/create_api_key", true, 403},
		{Anthropic, "POST", "/v1/messages/../files", true, 403},
		{Anthropic, "POST", "/v1/messages%2F..%2Ffiles", true, 403},
		{OpenAI, "POST", "/v1/responses", true, 200},
		{OpenAI, "GET", "/v1/models", true, 403},
		{OpenAI, "POST", "/v1/chat/completions", true, 403},
		{OpenAI, "POST", "/v1/files", true, 403},
		{OpenAI, "GET", "/v1/responses", true, 403},
		{Gemini, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", true, 200},
		{Gemini, "POST", "/v1beta/models/gemini-2.5-pro:countTokens", true, 200},
		{Gemini, "POST", "/v1/models/gemini-2.5-pro:streamGenerateContent", true, 200},
		{Gemini, "POST", "/v1beta/files", true, 403},
		{Gemini, "POST", "/v1beta/models/a/b:generateContent", true, 403},
		{Gemini, "POST", "/v1beta/cachedContents", true, 403},
		{Gemini, "GET", "/v1beta/models", true, 403},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %s key=%v", tt.vendor, tt.method, tt.path, tt.key), func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{}`)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}})
			h := map[string]string{}
			if tt.key {
				h["Authorization"] = "Bearer " + g.Key()
			} else {
				h["Authorization"] = "Bearer real" // even ralph's own key is not the run's
			}
			status, body := call(t, g, tt.method, tt.path, h)
			if status != tt.want {
				t.Errorf("status = %d, want %d (%s)", status, tt.want, body)
			}
			forwarded := len(up.requests())
			if tt.want == 200 && forwarded != 1 || tt.want != 200 && forwarded != 0 {
				t.Errorf("%d requests reached the vendor", forwarded)
			}
			if tt.want != 200 {
				refused := g.Refused()
				if len(refused) != 1 || !strings.Contains(refused[0], "refused") {
					t.Errorf("log lines = %q, want one saying what was refused", refused)
				}
			}
		})
	}
}

// Query parameters the API does not take are dropped (the Gemini key= among them); an upstream's own path
// prefixes every forwarded path.
func TestRewrite(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "application/json", `{}`)
	g := start(t, Options{Vendor: Gemini, Upstream: up.URL + "/proxy/gemini", Credential: Credential{"GEMINI_API_KEY", "real"}})
	if status, _ := call(t, g, "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key="+g.Key()+"&x=1", nil); status != 200 {
		t.Fatalf("status %d", status)
	}
	r := up.requests()[0]
	if got, want := r.URL.String(), "/proxy/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"; got != want {
		t.Errorf("forwarded to %s, want %s", got, want)
	}
}

// Budgets: once a limit is reached, every model request is refused, in the vendor's error shape with the
// reason; the request that crossed it was answered; token counting is not a model request.
func TestBudget(t *testing.T) {
	t.Parallel()
	per := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}.Cost(Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50})
	tests := []struct {
		name    string
		limits  []Limit
		answers int // requests answered before the refusals
		stopped string
	}{
		{"no limit", nil, 5, ""},
		{"cost", []Limit{{Name: "step", Cost: 2.5 * per, Why: "agent.max_cost"}}, 3, "step"},
		{"tokens", []Limit{{Name: "step tokens", Tokens: 2100, Why: "agent.max_tokens"}}, 2, "step tokens"},
		{"first reached wins", []Limit{{Name: "issue", Cost: 10 * per}, {Name: "day", Cost: per / 2}}, 1, "day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "text/event-stream", anthropicStream)
			g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}, Limits: tt.limits})
			key := map[string]string{"X-Api-Key": g.Key()}
			for i := 0; i < 5; i++ {
				if status, _ := call(t, g, "POST", "/v1/messages/count_tokens", key); status != 200 {
					t.Errorf("token counting refused")
				}
				status, body := call(t, g, "POST", "/v1/messages", key)
				if i < tt.answers {
					if status != 200 {
						t.Fatalf("request %d: %d %s", i+1, status, body)
					}
					continue
				}
				if status != 400 || !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "ralph: budget reached") {
					t.Errorf("request %d: %d %s, want the budget's refusal", i+1, status, body)
				}
			}
			if got := g.Usage().Requests; got != tt.answers {
				t.Errorf("requests = %d, want %d", got, tt.answers)
			}
			stop := g.Stopped()
			switch {
			case tt.stopped == "" && stop != nil:
				t.Errorf("stopped by %+v", stop)
			case tt.stopped != "" && (stop == nil || stop.Limit.Name != tt.stopped):
				t.Errorf("stopped by %+v, want %s", stop, tt.stopped)
			}
		})
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	p := DefaultPrices(Anthropic).With(Prices{"claude-sonnet-4-5": {Input: 1, Output: 2}})
	if got, _, _ := p.For("claude-sonnet-4-5-20250929"); got.Input != 1 || got.Output != 2 {
		t.Errorf("an override of claude-sonnet-4-5 priced its dated name at %+v", got)
	}
	if got, _, _ := p.For("claude-sonnet-4-20250514"); got.Input != 3 {
		t.Errorf("claude-sonnet-4 priced at %+v", got)
	}
	if got := (Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}).Cost(Tokens{Input: 1_000_000, CacheRead: 400_000, CacheWrite: 100_000, Output: 1_000_000}); math.Abs(got-(1.5+0.12+0.375+15)) > 1e-9 {
		t.Errorf("cost = %v", got)
	}
}

// A model the table does not know is priced at the dearest of each price of the table, and named.
func TestUnpricedModel(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "text/event-stream", strings.ReplaceAll(anthropicStream, "claude-sonnet-4-5-20250929", "claude-future-9"))
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	call(t, g, "POST", "/v1/messages", map[string]string{"X-Api-Key": g.Key()})
	u := g.Usage()
	want := DefaultPrices(Anthropic).Dearest().Cost(u.Tokens)
	if math.Abs(u.CostUSD-want) > 1e-12 || !cmp.Equal(u.Unpriced, []string{"claude-future-9"}) {
		t.Errorf("usage = %+v, want $%v and the model named", u, want)
	}
}

// A stream the agent stops reading is metered for what passed.
func TestClosedEarly(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "text/event-stream", anthropicStream)
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	req, _ := http.NewRequest("POST", g.URL()+"/v1/messages", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", g.Key())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(anthropicStream)/2)
	_, _ = io.ReadFull(resp.Body, buf)
	resp.Body.Close()
	g.Close()
	if u := g.Usage(); u.Input != 1000 {
		t.Errorf("metered %+v, want at least the prompt of message_start", u)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{
		{Vendor: "mistral", Credential: Credential{"X", "y"}},
		{Vendor: Anthropic},
		{Vendor: Anthropic, Credential: Credential{"ANTHROPIC_API_KEY", "y"}, Upstream: "ftp://x"},
		{Vendor: Anthropic, Credential: Credential{"ANTHROPIC_API_KEY", "y"}, Upstream: "/relative"},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v): no error", opts)
		}
	}
	g, err := New(Options{Vendor: Gemini, Credential: Credential{"GEMINI_API_KEY", "y"}})
	if err != nil || g.doors[0].upstream.String() != "https://generativelanguage.googleapis.com" || !strings.HasPrefix(g.Key(), "ralph-gw-") {
		t.Errorf("New = %v, %v", g, err)
	}
	h, _ := New(Options{Vendor: Gemini, Credential: Credential{"GEMINI_API_KEY", "y"}})
	if g.Key() == h.Key() {
		t.Errorf("two gateways share a key")
	}
}

// A long stream answers a request with a body and reaches the agent whole, every time: forwarded as it
// came, the request body is closed by the server once the answer's headers are out, and the transport's
// last read of it cuts the connection to the vendor mid-stream (golang/go's ReverseProxy does so about
// one time in twenty here).
func TestLongStreams(t *testing.T) {
	t.Parallel()
	body := anthropicAnswer(1 << 20)
	up := newUpstream(t, "text/event-stream", body)
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	client := &http.Client{Transport: &http.Transport{}}
	for i := 0; i < 40; i++ {
		req, _ := http.NewRequest("POST", g.URL()+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","stream":true}`))
		req.Header.Set("X-Api-Key", g.Key())
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != int64(len(body)) {
			t.Fatalf("request %d: %d of %d bytes: %v", i+1, n, len(body), err)
		}
	}
	if u := g.Usage(); u.Requests != 40 || u.Output != 40*500 {
		t.Errorf("usage = %+v, want 40 requests of 500 tokens out", u)
	}
}

// The run's key is good for its gateway only, which lives as long as the run: after Close nothing answers.
func TestKeyDiesWithTheRun(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "application/json", `{}`)
	g := start(t, Options{Vendor: OpenAI, Upstream: up.URL, Credential: Credential{"OPENAI_API_KEY", "real"}})
	other := start(t, Options{Vendor: OpenAI, Upstream: up.URL, Credential: Credential{"OPENAI_API_KEY", "real"}})
	if status, _ := call(t, other, "POST", "/v1/responses", map[string]string{"Authorization": "Bearer " + g.Key()}); status != 401 {
		t.Errorf("another run's gateway took this run's key: %d", status)
	}
	url, key := g.URL(), g.Key()
	g.Close()
	req, _ := http.NewRequest("POST", url+"/v1/responses", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a closed gateway answered %d", resp.StatusCode)
	}
	if len(up.requests()) != 0 {
		t.Errorf("the vendor got %d requests", len(up.requests()))
	}
}

// TestConnectionsServedAreBounded: the agent may open as many connections as it likes; the gateway serves
// at most maxConns at once, and the rest wait unaccepted (costing ralph nothing) until one ends.
func TestConnectionsServedAreBounded(t *testing.T) {
	t.Parallel()
	g := start(t, Options{Vendor: Anthropic, Upstream: "http://127.0.0.1:9", Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	addr := strings.TrimPrefix(g.URL(), "http://")
	var held []net.Conn
	for range maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/files HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatalf("a connection beyond %d was served while they were open, want it to wait", maxConns)
	}
	held[0].Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("once one connection ended, the waiting one got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("answer %s, want the refusal of a path without the run's key", resp.Status)
	}
}
