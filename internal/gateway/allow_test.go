package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// send posts body to the gateway with the run's key and the headers given, and returns the answer.
func send(t *testing.T, g *Gateway, path, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", g.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	switch g.opts.Vendor {
	case Anthropic:
		req.Header.Set("X-Api-Key", g.Key())
	case Gemini:
		req.Header.Set("X-Goog-Api-Key", g.Key())
	default:
		req.Header.Set("Authorization", "Bearer "+g.Key())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// What the presets' CLIs send, as captured from their requests through the gateway (Claude Code 2.1,
// Copilot CLI's Anthropic SDK, opencode 1.18 on Anthropic and OpenAI models, Codex 0.169, Gemini CLI 0.61), passes: every header and
// member the lists hold is one a real CLI sent.
func TestTheCLIsRequestsPass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vendor Vendor
		path   string
		header http.Header
		body   string
	}{
		{"claude", Anthropic, "/v1/messages?beta=true", http.Header{
			"Anthropic-Beta":                            {"claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,thinking-display-updates-2026-08-18"},
			"Anthropic-Version":                         {"2023-06-01"},
			"Anthropic-Dangerous-Direct-Browser-Access": {"true"},
			"X-App":                    {"cli"},
			"X-Claude-Code-Session-Id": {"s"},
			"X-Stainless-Retry-Count":  {"0"},
			"X-Stainless-Timeout":      {"600"},
			"Accept":                   {"application/json"},
			"Accept-Encoding":          {"gzip, deflate, br, zstd"},
			"Connection":               {"keep-alive"},
			"User-Agent":               {"claude-cli/2.1.330 (external, sdk-cli)"},
		}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"system":[],"metadata":{"user_id":"u"},"messages":[{"role":"user","content":"hi"}],"tools":[],"thinking":{"type":"enabled","budget_tokens":31999},"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}}`},
		// With an OAuth token, Claude Code asks for an hour's cache writes, which ralph prices.
		{"claude with an OAuth token", Anthropic, "/v1/messages?beta=true", http.Header{
			"Anthropic-Beta": {"claude-code-20250219,oauth-2025-04-20,extended-cache-ttl-2025-04-11,interleaved-thinking-2025-05-14"},
		}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"messages":[]}`},
		{"copilot", Anthropic, "/v1/messages", http.Header{
			"X-Initiator":               {"agent"},
			"X-Interaction-Type":        {"conversation-user"},
			"X-Stainless-Helper-Method": {"stream"},
			"Anthropic-Version":         {"2023-06-01"},
		}, `{"model":"claude-sonnet-4-5","max_tokens":8192,"stream":true,"system":"s","messages":[],"tools":[],"temperature":1,"thinking":{"type":"enabled","budget_tokens":16000}}`},
		{"opencode", Anthropic, "/v1/messages", http.Header{
			"Anthropic-Beta":     {"structured-outputs-2025-11-13,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14"},
			"X-Session-Id":       {"ses_1"},
			"X-Session-Affinity": {"ses_1"},
		}, `{"model":"claude-sonnet-4-5","max_tokens":8192,"stream":true,"system":[],"messages":[],"tools":[],"tool_choice":{"type":"auto"}}`},
		// opencode 1.18 on an OpenAI model: its openai provider speaks the Responses API.
		{"opencode on openai", OpenAI, "/v1/responses", http.Header{
			"Originator":         {"opencode"},
			"Session-Id":         {"ses_1"},
			"X-Session-Id":       {"ses_1"},
			"X-Session-Affinity": {"ses_1"},
			"Accept":             {"*/*"},
		}, `{"model":"gpt-5.2","input":[],"text":{"verbosity":"low"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"ses_1","reasoning":{"effort":"medium","summary":"auto"},"tools":[],"tool_choice":"auto","stream":true}`},
		{"codex", OpenAI, "/v1/responses", http.Header{
			"Originator":            {"codex_exec"},
			"Session-Id":            {"s"},
			"Thread-Id":             {"s"},
			"X-Client-Request-Id":   {"s"},
			"X-Codex-Window-Id":     {"s:0"},
			"X-Codex-Turn-Metadata": {`{"turn_id":"t"}`},
			"X-Codex-Beta-Features": {"remote_compaction_v2"},
			"Accept":                {"text/event-stream"},
		}, `{"model":"gpt-5.1-codex","instructions":"i","input":[],"tools":[],"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,"stream":true,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k","client_metadata":{}}`},
		{"gemini", Gemini, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", http.Header{
			"X-Goog-Api-Client":               {"google-genai-sdk/1.30.0 gl-node/v20.20.2"},
			"X-Gemini-Api-Privileged-User-Id": {"u"},
			"Accept-Language":                 {"*"},
			"Sec-Fetch-Mode":                  {"cors"},
		}, `{"contents":[],"systemInstruction":{"parts":[]},"tools":[],"generationConfig":{"temperature":1,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{}`)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}})
			if status, body := send(t, g, tt.path, tt.body, tt.header); status != 200 {
				t.Fatalf("answer = %d %s, want it forwarded", status, body)
			}
			if n := len(up.requests()); n != 1 {
				t.Fatalf("%d requests reached the vendor, want 1", n)
			}
		})
	}
}

// A member, a header or a beta feature the gateway does not know may change what the vendor bills: it is
// refused, named, and never reaches the vendor. Server-side compaction is refused whatever betas allow.
func TestUnknownMembersHeadersAndBetasAreRefused(t *testing.T) {
	t.Parallel()
	anthropicBody := func(extra string) string {
		return `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[]` + extra + `}`
	}
	tests := []struct {
		name   string
		vendor Vendor
		betas  []string
		header http.Header
		body   string
		want   []string // in the refusal
	}{
		{"compaction", Anthropic, []string{"compact-2026-01-12"}, http.Header{"Anthropic-Beta": {"compact-2026-01-12"}},
			anthropicBody(`,"context_management":{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":150000}}]}`),
			[]string{"context_management compaction", `"compact_20260112"`, "leave it out"}},
		{"unknown context edit", Anthropic, nil, nil,
			anthropicBody(`,"context_management":{"edits":[{"type":"summarize_20270101"}]}`), []string{`context edit "summarize_20270101"`}},
		{"unknown anthropic member", Anthropic, nil, nil, anthropicBody(`,"inference_geo":"us"`),
			[]string{`the member "inference_geo"`, "Anthropic Messages request"}},
		{"anthropic service tier", Anthropic, nil, nil, anthropicBody(`,"service_tier":"priority"`), []string{`the member "service_tier"`}},
		{"unknown openai member", OpenAI, nil, nil, `{"model":"gpt-5","input":"hi","stream":true,"frobnicate":1}`,
			[]string{`the member "frobnicate"`, "OpenAI Responses request"}},
		{"unknown gemini member", Gemini, nil, nil, `{"contents":[],"model":"gemini-2.5-pro"}`, []string{`the member "model"`}},
		{"unknown beta", Anthropic, nil, http.Header{"Anthropic-Beta": {"interleaved-thinking-2025-05-14, context-1m-2025-08-07"}},
			anthropicBody(""), []string{`the beta feature "context-1m-2025-08-07"`, "anthropic-beta", "gateway.betas"}},
		{"unknown beta, second header line", Anthropic, nil, http.Header{"Anthropic-Beta": {"interleaved-thinking-2025-05-14", "fast-mode-2026-02-01"}},
			anthropicBody(""), []string{`"fast-mode-2026-02-01"`}},
		{"openai beta", OpenAI, nil, http.Header{"Openai-Beta": {"realtime=v1"}}, `{"model":"gpt-5","input":"hi"}`,
			[]string{`the beta feature "realtime=v1" (openai-beta)`}},
		{"unknown header", Anthropic, nil, http.Header{"X-Frobnicate": {"1"}}, anthropicBody(""),
			[]string{`the header "X-Frobnicate" is not one ralph forwards`}},
		{"openai organization", OpenAI, nil, http.Header{"Openai-Organization": {"org-other"}}, `{"model":"gpt-5","input":"hi"}`,
			[]string{`the header "Openai-Organization"`}},
		{"many unknown members", Anthropic, nil, nil, anthropicBody(`,"m1":1,"m2":1,"m3":1,"m4":1,"m5":1,"m6":1,"m7":1`),
			[]string{`the member "m1", "m2", "m3", "m4", "m5" and 2 more is not one`}},
		{"count_tokens header", Anthropic, nil, http.Header{"X-Frobnicate": {"1"}}, anthropicBody(""), []string{`"X-Frobnicate"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{}`)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}, Betas: tt.betas})
			path := modelPath[tt.vendor]
			if tt.name == "count_tokens header" {
				path = "/v1/messages/count_tokens"
			}
			status, body := send(t, g, path, tt.body, tt.header)
			if status != http.StatusBadRequest {
				t.Fatalf("answer = %d %s, want 400", status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, strings.ReplaceAll(w, `"`, `\"`)) {
					t.Errorf("refusal %s does not say %s", body, w)
				}
			}
			if n := len(up.requests()); n != 0 {
				t.Errorf("%d requests reached the vendor", n)
			}
			if refused := g.Refused(); len(refused) != 1 || !strings.HasPrefix(refused[0], "refused POST ") {
				t.Errorf("log = %q, want one line saying what was refused", refused)
			}
		})
	}
}

// gateway.betas adds to the beta features ralph forwards: the same request passes once the config names
// its beta.
func TestConfiguredBetasPass(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "application/json", `{}`)
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}, Betas: []string{"context-1m-2025-08-07"}})
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[]}`
	if status, answer := send(t, g, "/v1/messages", body, http.Header{"Anthropic-Beta": {"context-1m-2025-08-07,interleaved-thinking-2025-05-14"}}); status != 200 {
		t.Fatalf("answer = %d %s", status, answer)
	}
	if got := up.requests()[0].Header.Get("Anthropic-Beta"); got != "context-1m-2025-08-07,interleaved-thinking-2025-05-14" {
		t.Errorf("the vendor got anthropic-beta %q", got)
	}
}
