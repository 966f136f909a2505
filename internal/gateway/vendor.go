package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Vendor is a model API the gateway speaks.
type Vendor string

// The vendors: the APIs of the presets' CLIs.
const (
	Anthropic Vendor = "anthropic" // Messages API (Claude Code)
	OpenAI    Vendor = "openai"    // Responses API (Codex)
	Gemini    Vendor = "gemini"    // Gemini API generateContent (Gemini CLI)
)

// Vendors lists every vendor, for config errors.
var Vendors = []Vendor{Anthropic, OpenAI, Gemini}

// DefaultUpstream is the vendor's public API host, where the gateway forwards unless the config says
// otherwise (gateway.upstream: a proxy, or a scripted model in tests).
func (v Vendor) DefaultUpstream() string {
	switch v {
	case Anthropic:
		return "https://api.anthropic.com"
	case OpenAI:
		return "https://api.openai.com"
	case Gemini:
		return "https://generativelanguage.googleapis.com"
	}
	return ""
}

// CredentialNames are the variables of ralph's environment that may hold the vendor's key, in the order
// they are looked for. The agent never gets any of them: the one ralph holds is replaced by the gateway's
// key for the run.
func (v Vendor) CredentialNames() []string {
	switch v {
	case Anthropic:
		return []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}
	case OpenAI:
		return []string{"OPENAI_API_KEY", "CODEX_API_KEY"}
	case Gemini:
		return []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	}
	return nil
}

// Credential is the vendor's key and the variable ralph took it from, which says how it is sent: an API key
// in the vendor's key header, or an OAuth token (CLAUDE_CODE_OAUTH_TOKEN) as a bearer token.
type Credential struct {
	Name  string
	Value string
}

// route is an API path the gateway forwards.
type route struct {
	method string
	path   *regexp.Regexp
	// metered: the path bills tokens, so the budget is checked before it is forwarded and its response is
	// read for usage. Token counting is free and unmetered.
	metered bool
}

// spec is what the gateway knows of one vendor's API.
type spec struct {
	routes []route
	// query are the query parameters forwarded; any other is dropped (the Gemini API's key= among them).
	query []string
	// credential sets the real key on the request to the vendor.
	credential func(h http.Header, c Credential)
	// errorBody is an error in the vendor's own shape, so that the CLI shows its message; code says what
	// refused it (a refusal's code, for the APIs whose errors carry one).
	errorBody func(status int, code, msg string) []byte
	// request reads a model request's body (its members), refusing through c what the gateway cannot
	// meter; it returns the most the answer can cost.
	request func(m map[string]json.RawMessage, c *checker) ask
	// event reads one server-sent event's data, json reads a whole JSON body, into u.
	event func(data []byte, u *reading)
	json  func(body []byte, u *reading)
}

// The codes of the gateway's refusals.
const (
	codeBudget   = "ralph_budget_reached"
	codePath     = "ralph_path_refused"
	codeRequest  = "ralph_request_refused"
	codeKey      = "invalid_api_key"
	codeUpstream = "ralph_upstream_error"
)

// geminiModel is a model name in a Gemini API path: no slash, no dot-dot.
const geminiModel = `[A-Za-z0-9][A-Za-z0-9._-]*`

func specOf(v Vendor) (spec, error) {
	switch v {
	case Anthropic:
		return spec{
			routes: []route{
				{http.MethodPost, regexp.MustCompile(`^/v1/messages$`), true},
				{http.MethodPost, regexp.MustCompile(`^/v1/messages/count_tokens$`), false},
			},
			query: []string{"beta"},
			credential: func(h http.Header, c Credential) {
				if c.Name == "CLAUDE_CODE_OAUTH_TOKEN" {
					h.Set("Authorization", "Bearer "+c.Value)
					return
				}
				h.Set("X-Api-Key", c.Value)
			},
			errorBody: func(status int, _, msg string) []byte {
				kind := "invalid_request_error"
				switch status {
				case http.StatusForbidden:
					kind = "permission_error"
				case http.StatusUnauthorized:
					kind = "authentication_error"
				}
				return mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
			},
			request: anthropicRequest,
			event:   anthropicEvent,
			json:    anthropicJSON,
		}, nil
	case OpenAI:
		return spec{
			routes: []route{{http.MethodPost, regexp.MustCompile(`^/v1/responses$`), true}},
			credential: func(h http.Header, c Credential) {
				h.Set("Authorization", "Bearer "+c.Value)
			},
			errorBody: func(_ int, code, msg string) []byte {
				return mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": code}})
			},
			request: openaiRequest,
			event:   openaiEvent,
			json:    openaiJSON,
		}, nil
	case Gemini:
		return spec{
			routes: []route{
				{http.MethodPost, regexp.MustCompile(`^/v1(beta)?/models/` + geminiModel + `:(generateContent|streamGenerateContent)$`), true},
				{http.MethodPost, regexp.MustCompile(`^/v1(beta)?/models/` + geminiModel + `:countTokens$`), false},
			},
			query: []string{"alt"},
			credential: func(h http.Header, c Credential) {
				h.Set("X-Goog-Api-Key", c.Value)
			},
			errorBody: func(status int, code, msg string) []byte {
				st := "FAILED_PRECONDITION"
				if code == codeRequest {
					st = "INVALID_ARGUMENT"
				}
				switch status {
				case http.StatusForbidden:
					st = "PERMISSION_DENIED"
				case http.StatusUnauthorized:
					st = "UNAUTHENTICATED"
				}
				return mustJSON(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
			},
			request: geminiRequest,
			event:   geminiEvent,
			json:    geminiJSON,
		}, nil
	}
	return spec{}, fmt.Errorf("unknown model API %q (want anthropic, openai or gemini)", v)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers
	}
	return b
}

// reading is what one response has said of its usage so far.
type reading struct {
	Tokens
	model string
	calls [len(ServerTools)]int // the server tools' uses, by ServerTool.index
	// hourWrites are the CacheWrite tokens written to Anthropic's cache for an hour, which it bills at
	// twice the input price (hourWritePrice) where a five minutes' write is 1.25 times.
	hourWrites int
	// final: the answer's last word on its usage is read, and what it says is what it billed.
	final bool
	// worst: the answer ended without saying, and is counted as the worst its request could bill.
	worst bool
	// prompt: the answer has said its prompt's tokens (Anthropic's input_tokens), without which its last
	// word on the output is not all it billed.
	prompt bool
}

// Anthropic: message_start carries the model and the prompt's usage, message_delta the output so far
// (and, in newer versions of the API, the prompt's again); input_tokens counts only what no cache served.
type anthropicUsage struct {
	InputTokens              *int `json:"input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	// CacheCreation says how many of the cache writes were for an hour ("ttl": "1h"), billed above the
	// five minutes' writes.
	CacheCreation *struct {
		Ephemeral1hInputTokens *int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	ServerToolUse *struct {
		WebSearchRequests int `json:"web_search_requests"`
		WebFetchRequests  int `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
	// Iterations are the passes the vendor made for one request (server-side compaction's summary, then
	// the message), each billed: the usage above may count the last alone.
	Iterations []anthropicIteration `json:"iterations"`
}

// anthropicIteration is one billed pass of a request, as usage.iterations reports it.
type anthropicIteration struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func (a anthropicUsage) apply(u *reading) {
	plain, write, read := u.Input-u.CacheRead-u.CacheWrite, u.CacheWrite, u.CacheRead
	if a.InputTokens != nil {
		plain, u.prompt = *a.InputTokens, true
	}
	if a.CacheCreationInputTokens != nil {
		write = *a.CacheCreationInputTokens
	}
	if a.CacheReadInputTokens != nil {
		read = *a.CacheReadInputTokens
	}
	u.Input, u.CacheWrite, u.CacheRead = plain+write+read, write, read
	if cc := a.CacheCreation; cc != nil && cc.Ephemeral1hInputTokens != nil {
		u.hourWrites = *cc.Ephemeral1hInputTokens
	}
	u.hourWrites = min(u.hourWrites, u.CacheWrite)
	if a.OutputTokens != nil {
		u.Output = *a.OutputTokens
	}
	if st := a.ServerToolUse; st != nil {
		u.calls[WebSearch.index()], u.calls[WebFetch.index()] = st.WebSearchRequests, st.WebFetchRequests
	}
	if len(a.Iterations) > 0 {
		// Every pass is billed: the answer counts what all of them say, where that is more.
		var it Tokens
		for _, i := range a.Iterations {
			it.Input += max(i.InputTokens, 0) + max(i.CacheCreationInputTokens, 0) + max(i.CacheReadInputTokens, 0)
			it.CacheWrite += max(i.CacheCreationInputTokens, 0)
			it.CacheRead += max(i.CacheReadInputTokens, 0)
			it.Output += max(i.OutputTokens, 0)
		}
		if it.Input > u.Input {
			u.Input, u.CacheWrite, u.CacheRead = it.Input, max(u.CacheWrite, it.CacheWrite), max(u.CacheRead, it.CacheRead)
		}
		u.Output = max(u.Output, it.Output)
	}
}

func anthropicEvent(data []byte, u *reading) {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			Model string         `json:"model"`
			Usage anthropicUsage `json:"usage"`
		} `json:"message"`
		Usage anthropicUsage `json:"usage"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		u.model = ev.Message.Model
		ev.Message.Usage.apply(u)
	case "message_delta":
		ev.Usage.apply(u)
		// The message's last usage: its output, and its server tools' uses; read fully only when the
		// prompt's was too.
		u.final = u.final || ev.Usage.OutputTokens != nil && u.prompt
	}
}

func anthropicJSON(body []byte, u *reading) {
	var m struct {
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	}
	if json.Unmarshal(body, &m) == nil {
		u.model = m.Model
		m.Usage.apply(u)
		u.final = m.Usage.InputTokens != nil && m.Usage.OutputTokens != nil
	}
}

// OpenAI Responses: the finished response (response.completed, or .incomplete or .failed) carries the
// usage; input_tokens includes the cached ones, output_tokens the reasoning ones. Its output lists the
// server tools' calls, one item each.
type openaiResponse struct {
	Model  string `json:"model"`
	Output []struct {
		Type string `json:"type"`
	} `json:"output"`
	Usage *struct {
		InputTokens        *int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens *int `json:"output_tokens"`
	} `json:"usage"`
}

func (r openaiResponse) apply(u *reading) {
	if r.Model != "" {
		u.model = r.Model
	}
	if r.Usage != nil {
		in, out := r.Usage.InputTokens, r.Usage.OutputTokens
		u.Input, u.CacheRead, u.Output = deref(in), r.Usage.InputTokensDetails.CachedTokens, deref(out)
		u.calls = [len(ServerTools)]int{}
		for _, item := range r.Output {
			if t, ok := openaiCalls[item.Type]; ok {
				u.calls[t.index()]++
			}
		}
		// A usage that leaves out its input or its output is not all the answer billed.
		u.final = in != nil && out != nil
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// openaiCalls are the output items of the server tools' calls.
var openaiCalls = map[string]ServerTool{"web_search_call": WebSearch, "file_search_call": FileSearch, "code_interpreter_call": CodeExecution, "mcp_call": MCP}

func openaiEvent(data []byte, u *reading) {
	var ev struct {
		Response openaiResponse `json:"response"`
	}
	if json.Unmarshal(data, &ev) == nil {
		ev.Response.apply(u)
	}
}

func openaiJSON(body []byte, u *reading) {
	var r openaiResponse
	if json.Unmarshal(body, &r) == nil {
		r.apply(u)
	}
}

// Gemini: every chunk carries usageMetadata so far; promptTokenCount includes the cached tokens, and the
// model's thoughts are billed as output. The last chunk has a finishReason (or the prompt's blockReason);
// an answer grounded in Google Search has groundingMetadata, with the queries it searched.
type geminiChunk struct {
	ModelVersion string `json:"modelVersion"`
	Candidates   []struct {
		FinishReason      string `json:"finishReason"`
		GroundingMetadata *struct {
			WebSearchQueries []string `json:"webSearchQueries"`
		} `json:"groundingMetadata"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
		ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	} `json:"usageMetadata"`
}

func (c geminiChunk) apply(u *reading) {
	if c.ModelVersion != "" {
		u.model = c.ModelVersion
	}
	if m := c.UsageMetadata; m != nil {
		u.Input = m.PromptTokenCount + m.ToolUsePromptTokenCount
		u.CacheRead = m.CachedContentTokenCount
		u.Output = m.CandidatesTokenCount + m.ThoughtsTokenCount
	}
	finished := c.PromptFeedback != nil && c.PromptFeedback.BlockReason != ""
	for _, cand := range c.Candidates {
		finished = finished || cand.FinishReason != ""
		if g := cand.GroundingMetadata; g != nil {
			// A grounded answer is billed at least once, whether or not it names its queries.
			i := WebSearch.index()
			u.calls[i] = max(u.calls[i], len(g.WebSearchQueries), 1)
		}
	}
	u.final = u.final || finished && c.UsageMetadata != nil
}

func geminiEvent(data []byte, u *reading) {
	var c geminiChunk
	if json.Unmarshal(data, &c) == nil {
		c.apply(u)
	}
}

// geminiJSON reads a generateContent answer, or a streamGenerateContent one without alt=sse: a JSON array
// of chunks.
func geminiJSON(body []byte, u *reading) {
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		var chunks []geminiChunk
		if json.Unmarshal(body, &chunks) == nil {
			for _, c := range chunks {
				c.apply(u)
			}
		}
		return
	}
	var c geminiChunk
	if json.Unmarshal(body, &c) == nil {
		c.apply(u)
		// A whole answer: its usage is its last.
		u.final = c.UsageMetadata != nil
	}
}
