package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRequest is what the gateway adds to one model request on loopback: the same streamed answer
// (an Anthropic message of the given size) fetched from the vendor stand-in directly and through the
// gateway, which checks the key, the path and the budget, rewrites the request and meters the stream.
// ns/op of "gateway" minus ns/op of "direct" is the added latency (target: at most 2 ms); B/op and
// allocs/op likewise are what it allocates per request, and stay flat as the answer grows (the stream is
// not buffered).
//
//	go test ./internal/gateway -run '^$' -bench Request -benchmem
func BenchmarkRequest(b *testing.B) {
	for _, size := range []int{2 << 10, 1 << 20} {
		body := anthropicAnswer(size)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, body)
		}))
		g, err := Start(Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"},
			Limits: []Limit{{Name: "step", Cost: 1e9}}})
		if err != nil {
			b.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		prompt := `{"model":"claude-sonnet-4-5","stream":true,"max_tokens":1024,"messages":[{"role":"user","content":"` + strings.Repeat("x", 8<<10) + `"}]}`
		for _, via := range []struct{ name, url, key string }{{"direct", up.URL, "real"}, {"gateway", g.URL(), g.Key()}} {
			b.Run(fmt.Sprintf("%s/answer=%dKiB", via.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					req, _ := http.NewRequest("POST", via.url+"/v1/messages", strings.NewReader(prompt))
					req.Header.Set("X-Api-Key", via.key)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || n != int64(len(body)) {
						b.Fatalf("answer %d of %d bytes", resp.StatusCode, n)
					}
				}
			})
		}
		g.Close()
		up.Close()
	}
}

// anthropicAnswer is a streamed message of about size bytes: message_start, text deltas, message_delta.
func anthropicAnswer(size int) string {
	var sb strings.Builder
	sb.WriteString("event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":3000,"output_tokens":1}}}` + "\n\n")
	delta := "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + strings.Repeat("a", 60) + `"}}` + "\n\n"
	for sb.Len() < size {
		sb.WriteString(delta)
	}
	sb.WriteString("event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":500}}` + "\n\n")
	sb.WriteString("event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n")
	return sb.String()
}
