package gateway

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// post sends body to the gateway with the run's key, as every vendor's CLI can (a bearer token).
func post(t *testing.T, g *Gateway, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", g.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.Key())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, sb.String()
}

// The paths of the three vendors' model requests, with a body of the vendor's around tools.
var modelPath = map[Vendor]string{
	Anthropic: "/v1/messages",
	OpenAI:    "/v1/responses",
	Gemini:    "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
}

func withTools(v Vendor, tools string) string {
	switch v {
	case Anthropic:
		return `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"hi"}],"tools":` + tools + `}`
	case OpenAI:
		return `{"model":"gpt-5","stream":true,"input":"hi","tools":` + tools + `}`
	}
	return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":` + tools + `}`
}

// What the gateway does not know how to meter never reaches the vendor: a request the vendor answers later
// (OpenAI's background mode, the batch and long-running APIs) and a body that is not the JSON object every
// model request is. The agent gets an error in its vendor's shape saying why.
func TestRefusedRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vendor Vendor
		method string
		path   string
		body   string
		status int
		says   string // in the refusal
	}{
		{"background", OpenAI, "POST", "/v1/responses", `{"model":"gpt-5","input":"hi","background":true}`, 400, "background"},
		{"background streamed", OpenAI, "POST", "/v1/responses", `{"model":"gpt-5","input":"hi","stream":true,"background":true}`, 400, "background"},
		{"background as a string", OpenAI, "POST", "/v1/responses", `{"model":"gpt-5","input":"hi","background":"true"}`, 400, "background"},
		{"background escaped", OpenAI, "POST", "/v1/responses", `{"model":"gpt-5","input":"hi","backgr\u006fund":true}`, 400, "background"},
		{"a key twice", OpenAI, "POST", "/v1/responses", `{"model":"gpt-5","input":"hi","background":true,"background":false}`, 400, "twice"},
		{"not JSON", OpenAI, "POST", "/v1/responses", `model=gpt-5&input=hi`, 400, "JSON"},
		{"not an object", Anthropic, "POST", "/v1/messages", `[{"model":"claude-sonnet-4-5"}]`, 400, "JSON"},
		{"trailing data", Anthropic, "POST", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":1} {"model":"x"}`, 400, "JSON"},
		{"empty", Gemini, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", ``, 400, "JSON"},
		{"token counting, not JSON", Anthropic, "POST", "/v1/messages/count_tokens", `{`, 400, "JSON"},
		{"tools not a list", Anthropic, "POST", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":1,"tools":{"type":"web_search_20250305"}}`, 400, "tools"},
		// The asynchronous APIs: not forwarded at all.
		{"openai batches", OpenAI, "POST", "/v1/batches", `{}`, 403, "refused"},
		{"openai a background answer", OpenAI, "GET", "/v1/responses/resp_1", ``, 403, "refused"},
		{"anthropic batches", Anthropic, "POST", "/v1/messages/batches", `{}`, 403, "refused"},
		{"gemini batch", Gemini, "POST", "/v1beta/models/gemini-2.5-pro:batchGenerateContent", `{}`, 403, "refused"},
		{"gemini async batch", Gemini, "POST", "/v1beta/models/text-embedding-004:asyncBatchEmbedContent", `{}`, 403, "refused"},
		{"gemini operations", Gemini, "GET", "/v1beta/batches/123", ``, 403, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{"id":"resp_1","object":"response","status":"queued","background":true,"usage":null}`)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}})
			req, _ := http.NewRequest(tt.method, g.URL()+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+g.Key())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			_, _ = fmt.Fprint(&sb, readAll(resp))
			if resp.StatusCode != tt.status || !strings.Contains(sb.String(), tt.says) {
				t.Errorf("answer = %d %s, want %d saying %q", resp.StatusCode, sb.String(), tt.status, tt.says)
			}
			if n := len(up.requests()); n != 0 {
				t.Errorf("%d requests reached the vendor", n)
			}
			if len(g.Refused()) != 1 {
				t.Errorf("log lines = %q, want one saying what was refused", g.Refused())
			}
		})
	}
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}

// Tools the vendor runs itself (searches, code execution, hosted MCP servers, file search, fetched URLs)
// are refused unless gateway.server_tools allows them; the caller's own tools, which its CLI runs, pass,
// as each CLI sends them.
func TestServerTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vendor Vendor
		body   string
		allow  []ServerTool
		status int
	}{
		// Claude Code's tools: no type (custom), and the Anthropic-defined tools the client runs.
		{"anthropic custom tools", Anthropic, withTools(Anthropic, `[{"name":"Write","input_schema":{"type":"object"}},{"type":"custom","name":"Bash","input_schema":{}}]`), nil, 200},
		{"anthropic client tools", Anthropic, withTools(Anthropic, `[{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"},{"type":"computer_20250124","name":"computer","display_width_px":1024,"display_height_px":768},{"type":"memory_20250818","name":"memory"}]`), nil, 200},
		{"anthropic web search", Anthropic, withTools(Anthropic, `[{"name":"Write","input_schema":{}},{"type":"web_search_20250305","name":"web_search"}]`), nil, 400},
		{"anthropic web search allowed", Anthropic, withTools(Anthropic, `[{"type":"web_search_20250305","name":"web_search","max_uses":5}]`), []ServerTool{WebSearch}, 200},
		{"anthropic web fetch", Anthropic, withTools(Anthropic, `[{"type":"web_fetch_20250910","name":"web_fetch"}]`), []ServerTool{WebSearch}, 400},
		{"anthropic web fetch allowed", Anthropic, withTools(Anthropic, `[{"type":"web_fetch_20250910","name":"web_fetch"}]`), []ServerTool{WebFetch}, 200},
		{"anthropic code execution", Anthropic, withTools(Anthropic, `[{"type":"code_execution_20250825","name":"code_execution"}]`), nil, 400},
		{"anthropic code execution allowed: not metered", Anthropic, withTools(Anthropic, `[{"type":"code_execution_20250825","name":"code_execution"}]`), []ServerTool{CodeExecution}, 400},
		{"anthropic container", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"container":"container_1"}`, nil, 400},
		{"anthropic mcp connector", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"mcp_servers":[{"type":"url","url":"https://mcp.example.com/sse","name":"x"}]}`, nil, 400},
		{"anthropic mcp connector allowed", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"mcp_servers":[{"type":"url","url":"https://mcp.example.com/sse","name":"x"}]}`, []ServerTool{MCP}, 200},
		{"anthropic mcp toolset", Anthropic, withTools(Anthropic, `[{"type":"mcp_toolset","mcp_server_name":"x"}]`), nil, 400},
		{"anthropic tool search", Anthropic, withTools(Anthropic, `[{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}]`), nil, 400},
		{"anthropic unknown type", Anthropic, withTools(Anthropic, `[{"type":"future_tool_20300101","name":"x"}]`), []ServerTool{WebSearch, WebFetch, CodeExecution, FileSearch, MCP}, 400},
		{"anthropic a type twice", Anthropic, withTools(Anthropic, `[{"type":"custom","type":"web_search_20250305","name":"x"}]`), nil, 400},
		// Codex's tools: functions, a namespace of functions; and what a hostile agent could add.
		{"openai client tools", OpenAI, withTools(OpenAI, `[{"type":"function","name":"exec_command","parameters":{}},{"type":"custom","name":"apply_patch"},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent"}]},{"type":"local_shell"}]`), nil, 200},
		{"openai web search", OpenAI, withTools(OpenAI, `[{"type":"web_search","external_web_access":true}]`), nil, 400},
		{"openai web search preview", OpenAI, withTools(OpenAI, `[{"type":"web_search_preview_2025_03_11"}]`), nil, 400},
		{"openai web search allowed", OpenAI, withTools(OpenAI, `[{"type":"function","name":"f"},{"type":"web_search"}]`), []ServerTool{WebSearch}, 200},
		{"openai web search in a namespace", OpenAI, withTools(OpenAI, `[{"type":"namespace","name":"n","tools":[{"type":"web_search"}]}]`), nil, 400},
		{"openai file search", OpenAI, withTools(OpenAI, `[{"type":"file_search","vector_store_ids":["vs_1"]}]`), nil, 400},
		{"openai file search allowed", OpenAI, withTools(OpenAI, `[{"type":"file_search","vector_store_ids":["vs_1"]}]`), []ServerTool{FileSearch}, 200},
		{"openai code interpreter", OpenAI, withTools(OpenAI, `[{"type":"code_interpreter","container":{"type":"auto"}}]`), nil, 400},
		{"openai code interpreter allowed", OpenAI, withTools(OpenAI, `[{"type":"code_interpreter","container":{"type":"auto"}}]`), []ServerTool{CodeExecution}, 200},
		{"openai hosted mcp", OpenAI, withTools(OpenAI, `[{"type":"mcp","server_label":"x","server_url":"https://mcp.example.com"}]`), nil, 400},
		{"openai image generation", OpenAI, withTools(OpenAI, `[{"type":"image_generation"}]`), []ServerTool{WebSearch, WebFetch, CodeExecution, FileSearch, MCP}, 400},
		{"openai no type", OpenAI, withTools(OpenAI, `[{"name":"f"}]`), nil, 400},
		// Gemini CLI's tools: function declarations; the API takes snake_case names as well.
		{"gemini functions", Gemini, withTools(Gemini, `[{"functionDeclarations":[{"name":"write_file"}]},{"function_declarations":[{"name":"read_file"}]}]`), nil, 200},
		{"gemini google search", Gemini, withTools(Gemini, `[{"functionDeclarations":[{"name":"write_file"}],"googleSearch":{}}]`), nil, 400},
		{"gemini google search, snake case", Gemini, withTools(Gemini, `[{"google_search":{}}]`), nil, 400},
		{"gemini search retrieval", Gemini, withTools(Gemini, `[{"googleSearchRetrieval":{}}]`), nil, 400},
		{"gemini google search allowed", Gemini, withTools(Gemini, `[{"googleSearch":{}}]`), []ServerTool{WebSearch}, 200},
		{"gemini url context", Gemini, withTools(Gemini, `[{"urlContext":{}}]`), nil, 400},
		{"gemini url context allowed", Gemini, withTools(Gemini, `[{"urlContext":{}}]`), []ServerTool{WebFetch}, 200},
		{"gemini code execution", Gemini, withTools(Gemini, `[{"codeExecution":{}}]`), nil, 400},
		{"gemini google maps", Gemini, withTools(Gemini, `[{"googleMaps":{}}]`), []ServerTool{WebSearch, WebFetch, CodeExecution, FileSearch, MCP}, 400},
		{"gemini file search", Gemini, withTools(Gemini, `[{"fileSearch":{"fileSearchStoreNames":["x"]}}]`), []ServerTool{WebSearch, WebFetch, CodeExecution, FileSearch, MCP}, 400},
		{"gemini a key twice", Gemini, withTools(Gemini, `[{"googleSearch":{},"google_search":{}}]`), []ServerTool{WebSearch}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, "application/json", `{}`)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}, ServerTools: tt.allow})
			status, body := post(t, g, modelPath[tt.vendor], tt.body)
			if status != tt.status {
				t.Errorf("answer = %d %s, want %d", status, body, tt.status)
			}
			forwarded := len(up.requests())
			if tt.status == 200 && forwarded != 1 || tt.status != 200 && forwarded != 0 {
				t.Errorf("%d requests reached the vendor", forwarded)
			}
			if tt.status == 400 && !strings.Contains(body, "ralph's model gateway") {
				t.Errorf("the refusal does not say who refused: %s", body)
			}
		})
	}
}

// A refused server tool is named in the refusal with what to set.
func TestServerToolRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, "application/json", `{}`)
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}})
	_, body := post(t, g, "/v1/messages", withTools(Anthropic, `[{"type":"web_search_20250305","name":"web_search"}]`))
	for _, want := range []string{`"type":"error"`, "web_search", "gateway.server_tools"} {
		if !strings.Contains(body, want) {
			t.Errorf("the refusal lacks %q: %s", want, body)
		}
	}
}

// An allowed server tool is priced per use, from what the vendor's answer reports, at the table's price per
// 1,000 uses: a budget in dollars stops it.
func TestServerToolsPriced(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vendor Vendor
		tools  string
		allow  []ServerTool
		ct     string
		answer string
		tokens Tokens
		model  string
		calls  map[ServerTool]int
	}{
		{"anthropic web search", Anthropic, `[{"type":"web_search_20250305","name":"web_search"}]`, []ServerTool{WebSearch}, "text/event-stream",
			strings.Replace(anthropicStream, `"usage":{"output_tokens":50}`, `"usage":{"output_tokens":50,"server_tool_use":{"web_search_requests":7,"web_fetch_requests":2}}`, 1),
			Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50}, "claude-sonnet-4-5-20250929", map[ServerTool]int{WebSearch: 7, WebFetch: 2}},
		{"anthropic web search, json", Anthropic, `[{"type":"web_search_20250305","name":"web_search"}]`, []ServerTool{WebSearch}, "application/json",
			`{"model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":7,"server_tool_use":{"web_search_requests":3}}}`,
			Tokens{Input: 10, Output: 7}, "claude-haiku-4-5", map[ServerTool]int{WebSearch: 3}},
		{"openai web search", OpenAI, `[{"type":"web_search"}]`, []ServerTool{WebSearch}, "text/event-stream",
			strings.Replace(openaiStream, `"status":"completed","usage"`, `"status":"completed","output":[{"type":"web_search_call","id":"ws_1","status":"completed"},{"type":"web_search_call","id":"ws_2","status":"completed"},{"type":"message","content":[]}],"usage"`, 1),
			Tokens{Input: 1000, CacheRead: 300, Output: 50}, "gpt-5.1-codex", map[ServerTool]int{WebSearch: 2}},
		{"openai code interpreter and file search", OpenAI, `[{"type":"code_interpreter","container":{"type":"auto"}},{"type":"file_search","vector_store_ids":["v"]}]`, []ServerTool{CodeExecution, FileSearch}, "application/json",
			`{"model":"gpt-5","output":[{"type":"code_interpreter_call"},{"type":"file_search_call"},{"type":"file_search_call"}],"usage":{"input_tokens":10,"output_tokens":7}}`,
			Tokens{Input: 10, Output: 7}, "gpt-5", map[ServerTool]int{CodeExecution: 1, FileSearch: 2}},
		{"gemini grounding", Gemini, `[{"googleSearch":{}}]`, []ServerTool{WebSearch}, "text/event-stream",
			geminiStream + `data: {"candidates":[{"content":{"parts":[]},"finishReason":"STOP","groundingMetadata":{"webSearchQueries":["a","b","c"]}}],"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":300,"candidatesTokenCount":40,"thoughtsTokenCount":10},"modelVersion":"gemini-2.5-pro"}` + "\r\n\r\n",
			Tokens{Input: 1000, CacheRead: 300, Output: 50}, "gemini-2.5-pro", map[ServerTool]int{WebSearch: 3}},
		{"gemini grounding without queries named", Gemini, `[{"googleSearch":{}}]`, []ServerTool{WebSearch}, "application/json",
			`{"candidates":[{"finishReason":"STOP","groundingMetadata":{"searchEntryPoint":{"renderedContent":"x"}}}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":7},"modelVersion":"gemini-2.5-flash"}`,
			Tokens{Input: 10, Output: 7}, "gemini-2.5-flash", map[ServerTool]int{WebSearch: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.ct, tt.answer)
			prices := DefaultPrices(tt.vendor)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"}, ServerTools: tt.allow})
			path := modelPath[tt.vendor]
			if tt.ct == "application/json" && tt.vendor == Gemini {
				path = "/v1beta/models/gemini-2.5-flash:generateContent"
			}
			if status, body := post(t, g, path, withTools(tt.vendor, tt.tools)); status != 200 {
				t.Fatalf("answer = %d %s", status, body)
			}
			u := g.Usage()
			if diff := cmp.Diff(tt.tokens, u.Tokens); diff != "" {
				t.Errorf("metered tokens (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.calls, u.ToolCalls); diff != "" {
				t.Errorf("metered server tool uses (-want +got):\n%s", diff)
			}
			p, _, known := prices.For(tt.model)
			if !known {
				t.Fatalf("%s has no price", tt.model)
			}
			want := p.Cost(tt.tokens)
			for tool, n := range tt.calls {
				want += float64(n) * prices.CallPrice(tt.model, tool) / 1000
			}
			if math.Abs(u.CostUSD-want) > 1e-12 || want <= p.Cost(tt.tokens) {
				t.Errorf("cost = %v, want %v (the tokens' %v and the tools')", u.CostUSD, want, p.Cost(tt.tokens))
			}
		})
	}
}

// The list prices of the server tools, per 1,000 uses, as the vendors publish them.
func TestServerToolListPrices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		vendor Vendor
		model  string
		tool   ServerTool
		want   float64
	}{
		{Anthropic, "claude-sonnet-4-5", WebSearch, 10},
		{Anthropic, "claude-sonnet-4-5", WebFetch, 0},
		{OpenAI, "gpt-5", WebSearch, 10},
		{OpenAI, "gpt-4.1", WebSearch, 25},
		{OpenAI, "gpt-5", FileSearch, 2.5},
		{OpenAI, "gpt-5", CodeExecution, 30},
		{Gemini, "gemini-2.5-pro", WebSearch, 35},
		{Gemini, "gemini-2.5-pro", CodeExecution, 0},
		{Gemini, "gemini-unknown", WebSearch, 35},
	}
	for _, tt := range tests {
		if got := DefaultPrices(tt.vendor).CallPrice(tt.model, tt.tool); got != tt.want {
			t.Errorf("%s %s %s = $%v per 1,000, want $%v", tt.vendor, tt.model, tt.tool, got, tt.want)
		}
	}
	// gateway.prices may set a model's price per use, and a model it adds costs the vendor's list price
	// per use unless it says otherwise.
	p := DefaultPrices(Anthropic).With(Prices{"claude-sonnet-4-5": {Input: 3, Output: 15, Calls: map[ServerTool]float64{WebSearch: 8}}, "mine": {Input: 1, Output: 1}})
	if got := p.CallPrice("claude-sonnet-4-5-20250929", WebSearch); got != 8 {
		t.Errorf("an override's price per web search = %v, want 8", got)
	}
	if got := p.CallPrice("mine", WebSearch); got != 10 {
		t.Errorf("an added model's price per web search = %v, want the list price 10", got)
	}
}

// A budget in dollars stops an agent that searches the web: each answer's searches are counted.
func TestServerToolsSpendTheBudget(t *testing.T) {
	t.Parallel()
	answer := `{"model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":7,"server_tool_use":{"web_search_requests":5}}}`
	up := newUpstream(t, "application/json", answer)
	g := start(t, Options{Vendor: Anthropic, Upstream: up.URL, Credential: Credential{"ANTHROPIC_API_KEY", "real"}, ServerTools: []ServerTool{WebSearch},
		Limits: []Limit{{Name: "step", Cost: 0.05, Why: "agent.max_cost"}}})
	body := withTools(Anthropic, `[{"type":"web_search_20250305","name":"web_search"}]`)
	answered := 0
	for range 20 {
		if status, _ := post(t, g, "/v1/messages", body); status == 200 {
			answered++
		}
	}
	// Each answer is 5 searches at $10 per 1,000: $0.05, the whole budget.
	if answered != 1 || g.Stopped() == nil || len(up.requests()) != 1 {
		t.Errorf("answered %d of 20, the vendor got %d, stopped %v; want 1, 1 and stopped", answered, len(up.requests()), g.Stopped())
	}
}

// A model is priced by its exact name, or a dated or -latest variant of one; anything else is priced at
// the dearest of each part of the table, so that a name that merely starts like a cheap model's is not
// priced as that model.
func TestPricesByName(t *testing.T) {
	t.Parallel()
	type tc struct {
		model   string
		matched string // "" : not known, priced at the dearest
	}
	tests := []struct {
		name   string
		prices Prices
		cases  []tc
	}{
		{"anthropic", DefaultPrices(Anthropic), []tc{
			{"claude-sonnet-4-5", "claude-sonnet-4-5"},
			{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
			{"claude-sonnet-4-20250514", "claude-sonnet-4"},
			{"claude-opus-4-1-20250805", "claude-opus-4-1"},
			{"claude-3-7-sonnet-latest", "claude-3-7-sonnet"},
			{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},
			{"CLAUDE-SONNET-4-5", "claude-sonnet-4-5"},
			{"claude-sonnet-4-5-evil", ""},
			{"claude-sonnet-4-5-2025", ""},
			{"claude-sonnet-4-5-20250929-20250929", ""},
			{"claude-opus-45", ""},
			{"claude-next", ""},
			{"", ""},
		}},
		{"openai", DefaultPrices(OpenAI), []tc{
			{"gpt-5", "gpt-5"},
			{"gpt-5-2025-08-07", "gpt-5"},
			{"gpt-5.1-codex", "gpt-5.1-codex"},
			{"o3-pro", "o3-pro"},
			{"o3-pro-2025-06-10", "o3-pro"},
			{"gpt-5.2-pro", "gpt-5.2-pro"},
			{"codex-mini-latest", "codex-mini-latest"},
			{"o3-2025-04-16", "o3"},
			{"gpt-5-turbo-max", ""},
			{"gpt-50", ""},
		}},
		{"gemini", DefaultPrices(Gemini), []tc{
			{"models/gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
			{"gemini-2.5-pro", "gemini-2.5-pro"},
			{"gemini-3-pro-preview", "gemini-3-pro-preview"},
			{"gemini-2.5-pro-exp", ""},
		}},
		// A table without the pro models: they are not priced as the models their names start with.
		{"a table without the pro models", Prices{"o3": {Input: 2, Output: 8}, "gpt-5": {Input: 1.25, Output: 10}, "big": {Input: 20, Output: 5}}, []tc{
			{"o3-pro", ""},
			{"gpt-5.2-pro", ""},
			{"gpt-5-latest", "gpt-5"},
		}},
		// gateway.prices entries are matched the same way.
		{"an override", DefaultPrices(Anthropic).With(Prices{"my-model": {Input: 1, Output: 2}}), []tc{
			{"my-model", "my-model"},
			{"my-model-20260101", "my-model"},
			{"my-model-large", ""},
		}},
	}
	for _, tt := range tests {
		dearest := tt.prices.Dearest()
		for _, c := range tt.cases {
			p, matched, known := tt.prices.For(c.model)
			if matched != c.matched || known != (c.matched != "") {
				t.Errorf("%s: For(%q) = %q %v, want %q", tt.name, c.model, matched, known, c.matched)
			}
			if c.matched == "" && !cmp.Equal(p, dearest) {
				t.Errorf("%s: %q priced %+v, want the dearest of each part %+v", tt.name, c.model, p, dearest)
			}
		}
	}
	if d := (Prices{"a": {Input: 20, Output: 5, CacheRead: 1}, "b": {Input: 1, Output: 80, CacheWrite: 3}}).Dearest(); d.Input != 20 || d.Output != 80 || d.CacheRead != 1 || d.CacheWrite != 3 {
		t.Errorf("Dearest = %+v, want each part's dearest", d)
	}
	o3, _, _ := DefaultPrices(OpenAI).For("o3")
	o3pro, _, _ := DefaultPrices(OpenAI).For("o3-pro")
	gpt5, _, _ := DefaultPrices(OpenAI).For("gpt-5")
	gpt52pro, _, _ := DefaultPrices(OpenAI).For("gpt-5.2-pro")
	if o3pro.Output <= o3.Output || gpt52pro.Output <= gpt5.Output {
		t.Errorf("o3-pro at %+v (o3 %+v), gpt-5.2-pro at %+v (gpt-5 %+v): the pro models must cost more", o3pro, o3, gpt52pro, gpt5)
	}
}

// An answer whose usage ralph cannot read is counted as the worst the request could cost: its whole body
// as input (a token is at least a byte of it) and its maximum output, at the dearest prices of the table;
// so a budget always stops it. An error answer (the vendor bills none) counts nothing.
func TestUnreadableUsage(t *testing.T) {
	t.Parallel()
	const maxTokens = 4096
	anthropicBody := `{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	openaiBody := `{"model":"gpt-5","max_output_tokens":4096,"stream":true,"input":"hi"}`
	geminiBody := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":4096,"thinkingConfig":{"thinkingBudget":1000}}}`
	tests := []struct {
		name   string
		vendor Vendor
		path   string
		body   string
		status int
		ct     string
		answer string
		read   Tokens // what the answer said before it stopped
		output int    // the request's worst output
		worst  bool
	}{
		{"anthropic, no usage", Anthropic, "/v1/messages", anthropicBody, 200, "application/json", `{"id":"m","model":"claude-sonnet-4-5","content":[]}`, Tokens{}, maxTokens, true},
		{"anthropic, malformed", Anthropic, "/v1/messages", anthropicBody, 200, "application/json", `{"id":"m","model":"claude-sonnet-4-5","usage":{"input_tokens":"many"}`, Tokens{}, maxTokens, true},
		{"anthropic, cut before message_delta", Anthropic, "/v1/messages", anthropicBody, 200, "text/event-stream", anthropicStream[:strings.Index(anthropicStream, "event: message_delta")], Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 1}, maxTokens, true},
		{"anthropic, thinking beyond max_tokens", Anthropic, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":20000},"messages":[]}`, 200, "application/json", `{}`, Tokens{}, maxTokens + 20000, true},
		{"openai, background answer", OpenAI, "/v1/responses", `{"model":"gpt-5","input":"hi"}`, 200, "application/json", `{"id":"resp_1","object":"response","status":"queued","usage":null}`, Tokens{}, defaultMaxOutput, true},
		{"openai, cut before response.completed", OpenAI, "/v1/responses", openaiBody, 200, "text/event-stream", openaiStream[:strings.Index(openaiStream, "event: response.completed")], Tokens{}, maxTokens, true},
		{"openai, unknown shape", OpenAI, "/v1/responses", openaiBody, 200, "application/json", `{"result":{"tokens":12}}`, Tokens{}, maxTokens, true},
		{"gemini, cut before the last chunk", Gemini, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", geminiBody, 200, "text/event-stream", geminiStream[:strings.Index(geminiStream, "\r\n\r\n")+4], Tokens{Input: 1000, CacheRead: 300}, maxTokens + 1000, true},
		{"gemini, no thinking budget", Gemini, "/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[],"generationConfig":{"maxOutputTokens":4096}}`, 200, "application/json", `{"candidates":[]}`, Tokens{}, maxTokens + defaultThinking, true},
		// A usage read in part is not all the answer billed: it counts as the worst case too.
		{"anthropic, stream without the prompt's usage", Anthropic, "/v1/messages", anthropicBody, 200, "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":50}}\n\n", Tokens{Output: 50}, maxTokens, true},
		{"openai, usage without its output", OpenAI, "/v1/responses", openaiBody, 200, "application/json", `{"id":"r","model":"gpt-5","status":"completed","usage":{"input_tokens":10}}`, Tokens{Input: 10}, maxTokens, true},
		{"openai, usage without its input", OpenAI, "/v1/responses", openaiBody, 200, "application/json", `{"id":"r","model":"gpt-5","status":"completed","usage":{"output_tokens":10}}`, Tokens{Output: 10}, maxTokens, true},
		{"an error answer", Anthropic, "/v1/messages", anthropicBody, 429, "application/json", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, Tokens{}, 0, false},
		{"a whole answer", Anthropic, "/v1/messages", anthropicBody, 200, "text/event-stream", anthropicStream, Tokens{Input: 1000, CacheRead: 300, CacheWrite: 100, Output: 50}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.ct, tt.answer)
			if tt.status != 200 {
				up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tt.ct)
					w.WriteHeader(tt.status)
					_, _ = w.Write([]byte(tt.answer))
				})
			}
			prices := DefaultPrices(tt.vendor)
			g := start(t, Options{Vendor: tt.vendor, Upstream: up.URL, Credential: Credential{tt.vendor.CredentialNames()[0], "real"},
				Limits: []Limit{{Name: "step", Cost: 0.01, Why: "agent.max_cost"}}})
			if status, body := post(t, g, tt.path, tt.body); status != tt.status {
				t.Fatalf("answer = %d %s", status, body)
			}
			u := g.Usage()
			want := tt.read
			if tt.worst {
				want = Tokens{Input: max(tt.read.Input, len(tt.body)), Output: max(tt.read.Output, tt.output)}
			}
			if diff := cmp.Diff(want, u.Tokens); diff != "" {
				t.Errorf("metered tokens (-want +got):\n%s", diff)
			}
			if !tt.worst {
				if u.Unmetered != 0 {
					t.Errorf("unmetered = %d, want 0", u.Unmetered)
				}
				return
			}
			d := prices.Dearest()
			in := max(d.Input, d.CacheWrite, d.CacheRead)
			if tt.vendor == Anthropic {
				in = max(in, 2*d.Input) // a prompt token written to the cache for an hour
			}
			wantCost := (float64(want.Input)*in + float64(want.Output)*d.Output) / 1e6
			if math.Abs(u.CostUSD-wantCost) > 1e-9 || u.Unmetered != 1 {
				t.Errorf("cost = $%v, unmetered %d; want the worst case $%v, 1", u.CostUSD, u.Unmetered, wantCost)
			}
			if status, _ := post(t, g, tt.path, tt.body); status != 400 || g.Stopped() == nil {
				t.Errorf("the request after an unreadable answer: %d, stopped %v; want the budget's refusal", status, g.Stopped())
			}
		})
	}
}
