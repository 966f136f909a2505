package gateway

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// postTo sends a model request to url with the run's key in header.
func postTo(t *testing.T, url, header, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// One gateway serves two vendors in one run: each at its own base URL, forwarded to its own upstream with
// its own key, metered at its own prices, into one usage split by vendor.
func TestTwoVendors(t *testing.T) {
	t.Parallel()
	ant := newUpstream(t, "text/event-stream", anthropicStream)
	oai := newUpstream(t, "text/event-stream", openaiStream)
	antPrice := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	oaiPrice := Price{Input: 2, Output: 20, CacheRead: 0.5}
	g := start(t, Options{Vendor: Anthropic, Upstream: ant.URL, Credential: Credential{"ANTHROPIC_API_KEY", "sk-ant-real"},
		More: []API{{Vendor: OpenAI, Upstream: oai.URL + "/proxy", Credential: Credential{"OPENAI_API_KEY", "sk-oai-real"},
			Prices: Prices{"gpt-5.1-codex": oaiPrice}}}})
	if got, want := g.VendorURL(Anthropic), g.URL(); got != want {
		t.Errorf("VendorURL(anthropic) = %s, want %s", got, want)
	}
	if got, want := g.VendorURL(OpenAI), g.URL()+"/openai"; got != want {
		t.Errorf("VendorURL(openai) = %s, want %s", got, want)
	}
	if got := g.VendorURL(Gemini); got != "" {
		t.Errorf("VendorURL(gemini) = %q for a vendor the gateway does not serve", got)
	}
	if status, body := postTo(t, g.VendorURL(Anthropic)+"/v1/messages", "X-Api-Key", g.Key()); status != 200 || body != anthropicStream {
		t.Fatalf("anthropic: %d %s", status, body)
	}
	for range 2 {
		if status, body := postTo(t, g.VendorURL(OpenAI)+"/v1/responses", "Authorization", "Bearer "+g.Key()); status != 200 || body != openaiStream {
			t.Fatalf("openai: %d %s", status, body)
		}
	}
	// Each vendor got its own requests, on its own path, with its own key.
	if r := ant.requests(); len(r) != 1 || r[0].URL.Path != "/v1/messages" || r[0].Header.Get("X-Api-Key") != "sk-ant-real" || r[0].Header.Get("Authorization") != "" {
		t.Errorf("anthropic got %d requests: %v", len(r), r)
	}
	oaiReqs := oai.requests()
	if len(oaiReqs) != 2 {
		t.Fatalf("openai got %d requests, want 2", len(oaiReqs))
	}
	for _, r := range oaiReqs {
		if r.URL.Path != "/proxy/v1/responses" || r.Header.Get("Authorization") != "Bearer sk-oai-real" || r.Header.Get("X-Api-Key") != "" {
			t.Errorf("openai got %s with Authorization %q, X-Api-Key %q", r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		}
	}
	antTokens := Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50}
	oaiTokens := Tokens{Input: 2000, CacheRead: 600, Output: 100}
	want := map[Vendor]Spent{
		Anthropic: {Tokens: antTokens, Requests: 1, CostUSD: antPrice.Cost(antTokens)},
		OpenAI:    {Tokens: oaiTokens, Requests: 2, CostUSD: 2 * oaiPrice.Cost(Tokens{Input: 1000, CacheRead: 300, Output: 50})},
	}
	u := g.Usage()
	if diff := cmp.Diff(want, u.Vendors, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("usage by vendor (-want +got):\n%s", diff)
	}
	if u.Requests != 3 || u.Tokens != antTokens.add(oaiTokens, 1) || math.Abs(u.CostUSD-want[Anthropic].CostUSD-want[OpenAI].CostUSD) > 1e-12 {
		t.Errorf("usage = %+v, want the sums of %+v", u, want)
	}
}

// A vendor's paths are its own: another vendor's path under its prefix, or its own at the root, is refused
// in the shape of the vendor the path was for.
func TestTwoVendorsPaths(t *testing.T) {
	t.Parallel()
	ant := newUpstream(t, "text/event-stream", anthropicStream)
	oai := newUpstream(t, "text/event-stream", openaiStream)
	g := start(t, Options{Vendor: Anthropic, Upstream: ant.URL, Credential: Credential{"ANTHROPIC_API_KEY", "a"},
		More: []API{{Vendor: OpenAI, Upstream: oai.URL, Credential: Credential{"OPENAI_API_KEY", "o"}}}})
	for _, tt := range []struct{ path, shape string }{
		{"/v1/responses", `"type":"error"`},                    // OpenAI's path at Anthropic's root
		{"/openai/v1/messages", `"code":"ralph_path_refused"`}, // Anthropic's path under OpenAI's prefix
		{"/openai/openai/v1/responses", `"code":"ralph_path_refused"`},
		{"/gemini/v1beta/models/x:generateContent", `"type":"error"`},
		{"/openaiv1/responses", `"type":"error"`},
	} {
		status, body := postTo(t, g.URL()+tt.path, "Authorization", "Bearer "+g.Key())
		if status != 403 || !strings.Contains(body, tt.shape) || !strings.Contains(body, "anthropic and openai") {
			t.Errorf("%s: %d %s, want a refusal in the shape %s naming both vendors", tt.path, status, body, tt.shape)
		}
	}
	if n := len(ant.requests()) + len(oai.requests()); n != 0 {
		t.Errorf("the vendors got %d requests", n)
	}
	if _, err := New(Options{Vendor: Anthropic, Credential: Credential{"ANTHROPIC_API_KEY", "a"},
		More: []API{{Vendor: Anthropic, Credential: Credential{"ANTHROPIC_API_KEY", "b"}}}}); err == nil {
		t.Errorf("New with a vendor twice: no error")
	}
	if _, err := New(Options{Vendor: Anthropic, Credential: Credential{"ANTHROPIC_API_KEY", "a"},
		More: []API{{Vendor: OpenAI}}}); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("New without the second vendor's key: %v, want an error naming its variable", err)
	}
}

// The run has one budget, whichever vendor spends it: once the requests to either reach max_cost, the
// requests to both are refused, each in its vendor's shape.
func TestTwoVendorsBudget(t *testing.T) {
	t.Parallel()
	antPer := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}.Cost(Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50})
	oaiPer := Price{Input: 1.25, Output: 10, CacheRead: 0.125}.Cost(Tokens{Input: 1000, CacheRead: 300, Output: 50})
	for _, first := range []Vendor{Anthropic, OpenAI} {
		t.Run(string(first), func(t *testing.T) {
			t.Parallel()
			ant := newUpstream(t, "text/event-stream", anthropicStream)
			oai := newUpstream(t, "text/event-stream", openaiStream)
			// Two answers of the first vendor reach the limit; one does not.
			per := map[Vendor]float64{Anthropic: antPer, OpenAI: oaiPer}[first]
			g := start(t, Options{Vendor: Anthropic, Upstream: ant.URL, Credential: Credential{"ANTHROPIC_API_KEY", "a"},
				More:   []API{{Vendor: OpenAI, Upstream: oai.URL, Credential: Credential{"OPENAI_API_KEY", "o"}}},
				Limits: []Limit{{Name: "step", Cost: 1.5 * per, Why: "agent.max_cost"}}})
			call := map[Vendor]func() (int, string){
				Anthropic: func() (int, string) { return postTo(t, g.VendorURL(Anthropic)+"/v1/messages", "X-Api-Key", g.Key()) },
				OpenAI: func() (int, string) {
					return postTo(t, g.VendorURL(OpenAI)+"/v1/responses", "Authorization", "Bearer "+g.Key())
				},
			}
			for i := range 2 {
				if status, body := call[first](); status != 200 {
					t.Fatalf("%s request %d: %d %s", first, i+1, status, body)
				}
			}
			shape := map[Vendor]string{Anthropic: `"type":"error"`, OpenAI: `"code":"ralph_budget_reached"`}
			for _, v := range []Vendor{Anthropic, OpenAI} {
				if status, body := call[v](); status != 400 || !strings.Contains(body, "ralph: budget reached") || !strings.Contains(body, shape[v]) {
					t.Errorf("%s past the budget: %d %s, want the budget's refusal", v, status, body)
				}
			}
			u := g.Usage()
			if stop := g.Stopped(); stop == nil || stop.Limit.Name != "step" || u.Requests != 2 || u.Vendors[first].Requests != 2 {
				t.Errorf("stopped by %+v, usage %+v: want the step's budget after 2 %s requests", stop, u, first)
			}
		})
	}
}
