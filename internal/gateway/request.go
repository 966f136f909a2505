package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
)

// ServerTool is a tool the vendor runs itself (a search, code in a container, a remote MCP server), named
// alike for every vendor: the names gateway.server_tools takes. The caller's own tools (functions, and the
// vendor-defined tools its CLI runs, such as Anthropic's bash or text editor) are not server tools.
type ServerTool string

// The server tools the gateway can meter, for some vendor (callPrices says which).
const (
	WebSearch     ServerTool = "web_search"     // Anthropic web_search, OpenAI web_search, Gemini googleSearch
	WebFetch      ServerTool = "web_fetch"      // Anthropic web_fetch, Gemini urlContext
	CodeExecution ServerTool = "code_execution" // OpenAI code_interpreter, Gemini codeExecution
	FileSearch    ServerTool = "file_search"    // OpenAI file_search
	MCP           ServerTool = "mcp"            // Anthropic's MCP connector, OpenAI's hosted MCP tool
)

// ServerTools lists the server tools, in the order of a reading's counts.
var ServerTools = [...]ServerTool{WebSearch, WebFetch, CodeExecution, FileSearch, MCP}

func (t ServerTool) index() int {
	for i, s := range ServerTools {
		if s == t {
			return i
		}
	}
	return -1
}

// The worst an answer can be, when it does not say its usage: the output of a request that sets no maximum,
// the thinking of a Gemini request that sets no budget (the largest Gemini 2.5 takes), and the context of a
// request that refers to a prompt the vendor keeps (a stored conversation, a cached content), which its body
// does not hold.
const (
	defaultMaxOutput = 128_000
	defaultThinking  = 32_768
	maxContext       = 1_000_000
)

// ask is what the gateway read of a model request: the most its answer can bill, in tokens, counted when
// the answer does not say what it billed. Every token of a prompt is at least one byte of the request that
// carries it, so the body's size bounds the prompt.
type ask struct {
	input  int
	output int
}

// checker reads one model request's body and keeps the first reason to refuse it.
type checker struct {
	vendor  Vendor
	allowed map[ServerTool]bool
	why     string
}

func (c *checker) refuse(format string, args ...any) {
	if c.why == "" {
		c.why = fmt.Sprintf(format, args...)
	}
}

// server checks a server tool the request asks for: allowed by the config, and one ralph meters for the
// vendor. what names it as the request does.
func (c *checker) server(t ServerTool, what string) {
	if _, ok := callPrices[c.vendor][t]; !ok {
		c.refuse("%s is a %s tool of the %s API, whose cost ralph cannot meter", what, t, c.vendor)
		return
	}
	if !c.allowed[t] {
		c.refuse("%s is a %s tool, which the model's vendor runs and bills apart; ralph forwards it only when `gateway.server_tools` in .github/ralph.yml lists %s", what, t, t)
	}
}

func (c *checker) unknown(what string) {
	c.refuse("%s is not a tool ralph knows how to meter: it forwards the caller's own tools (functions) and the server tools `gateway.server_tools` allows", what)
}

// quoted is a name from the request, for a message: quoted and cut short.
func quoted(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// object reads a JSON object's members. A member named twice is refused: the gateway would read one and the
// vendor might read the other. name, when set, is how the vendor's API reads a member's name (Gemini takes
// google_search for googleSearch); two members it reads alike are the same member.
func object(raw []byte, name func(string) string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, errors.New("not a JSON object")
		}
		k, _ := t.(string)
		if name != nil {
			k = name(k)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("not a JSON object")
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("the member %s is there twice", quoted(k))
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return out, nil
}

// present: the member is there with a value (not null, not an empty list or object).
func present(m map[string]json.RawMessage, k string) bool {
	v, ok := m[k]
	if !ok {
		return false
	}
	s := string(bytes.TrimSpace(v))
	return s != "null" && s != "[]" && s != "{}"
}

// list reads a member that must be a JSON array (absent or null: none).
func list(m map[string]json.RawMessage, k string) ([]json.RawMessage, error) {
	if !present(m, k) {
		return nil, nil
	}
	var out []json.RawMessage
	if err := json.Unmarshal(m[k], &out); err != nil {
		return nil, fmt.Errorf("%s is not a list", k)
	}
	return out, nil
}

// count reads a number of tokens: def when absent or not a number, the number otherwise (up to a billion).
func count(raw json.RawMessage, def int) int {
	var f float64
	if raw == nil || json.Unmarshal(raw, &f) != nil || f < 0 || math.IsNaN(f) {
		return def
	}
	return int(min(f, 1e9))
}

// eachTool calls f with each tool of the request's tools member, in order, read as object reads it (name:
// how the vendor reads a member's name); a member that is no list, or a tool that is no object, is refused.
func eachTool(m map[string]json.RawMessage, c *checker, name func(string) string, f func(tool map[string]json.RawMessage)) {
	tools, err := list(m, "tools")
	if err != nil {
		c.refuse("%v", err)
	}
	for _, raw := range tools {
		tool, err := object(raw, name)
		if err != nil {
			c.refuse("a tool: %v", err)
			continue
		}
		f(tool)
	}
}

// typed is a tool's type: "" when it has none.
func typed(tool map[string]json.RawMessage) (string, bool) {
	raw, ok := tool["type"]
	if !ok {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// The Anthropic-defined tools the client runs (Claude Code's CLI executes them), and the server tools.
var (
	anthropicClientTool = regexp.MustCompile(`^(bash|text_editor|computer|memory)_\d{8}$`)
	anthropicWebSearch  = regexp.MustCompile(`^web_search_\d{8}$`)
	anthropicWebFetch   = regexp.MustCompile(`^web_fetch_\d{8}$`)
	anthropicCode       = regexp.MustCompile(`^code_execution_\d{8}$`)
)

// anthropicRequest reads a Messages request: no fast mode (billed above the list prices); its tools, the
// MCP connector and code containers; and its maximum output (max_tokens, which covers the thinking except
// where interleaved thinking's budget exceeds it: both are counted).
func anthropicRequest(m map[string]json.RawMessage, c *checker) ask {
	a := ask{output: count(m["max_tokens"], defaultMaxOutput)}
	if v, ok := m["speed"]; ok {
		// Fast mode bills the model's tokens at a multiple of its list prices, which its usage does not say.
		var speed string
		_ = json.Unmarshal(v, &speed)
		if speed != "standard" && string(bytes.TrimSpace(v)) != "null" {
			c.refuse("speed %s is billed above the list prices ralph meters at; leave it out, or use standard", quoted(string(v)))
		}
	}
	if present(m, "thinking") {
		if th, err := object(m["thinking"], nil); err == nil {
			a.output += count(th["budget_tokens"], 0)
		}
	}
	eachTool(m, c, nil, func(tool map[string]json.RawMessage) {
		typ, ok := typed(tool)
		switch what := "the tool type " + quoted(typ); {
		case !ok:
			c.refuse("a tool's type is not a string")
		case typ == "" || typ == "custom" || anthropicClientTool.MatchString(typ):
		case anthropicWebSearch.MatchString(typ):
			c.server(WebSearch, what)
		case anthropicWebFetch.MatchString(typ):
			c.server(WebFetch, what)
		case anthropicCode.MatchString(typ):
			c.server(CodeExecution, what)
		case typ == "mcp_toolset":
			c.server(MCP, what)
		default:
			c.unknown(what)
		}
	})
	if present(m, "mcp_servers") {
		c.server(MCP, "the MCP connector (mcp_servers)")
	}
	if present(m, "container") {
		c.server(CodeExecution, "a code execution container (container)")
	}
	return a
}

// The OpenAI tool types the caller runs: functions (in a namespace too), free-form tools, and the shell,
// patch and computer tools whose calls come back to the client.
var (
	openaiClientTool = map[string]bool{"function": true, "custom": true, "local_shell": true, "shell": true, "apply_patch": true, "computer_use_preview": true, "computer_use": true}
	openaiWebSearch  = regexp.MustCompile(`^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$`)
)

// openaiRequest reads a Responses request: no background mode (its answer comes later, without usage), no
// stored prompt (it may bring tools of its own), no priority processing (billed above the list prices); its
// tools; its maximum output (max_output_tokens, reasoning included).
func openaiRequest(m map[string]json.RawMessage, c *checker) ask {
	a := ask{output: count(m["max_output_tokens"], defaultMaxOutput)}
	if v, ok := m["background"]; ok && string(bytes.TrimSpace(v)) != "false" && string(bytes.TrimSpace(v)) != "null" {
		c.refuse("background mode answers later, with no usage ralph can meter; send the request without background")
	}
	if present(m, "prompt") {
		c.refuse("a stored prompt (prompt) may bring tools ralph cannot see; send the prompt itself")
	}
	if v, ok := m["service_tier"]; ok {
		var tier string
		_ = json.Unmarshal(v, &tier)
		if tier != "auto" && tier != "default" && tier != "flex" && string(bytes.TrimSpace(v)) != "null" {
			c.refuse("service_tier %s is billed above the list prices ralph meters at; leave it out, or use auto, default or flex", quoted(string(v)))
		}
	}
	if present(m, "previous_response_id") || present(m, "conversation") {
		a.input += maxContext
	}
	openaiTools(m, c, 0)
	return a
}

func openaiTools(m map[string]json.RawMessage, c *checker, depth int) {
	eachTool(m, c, nil, func(tool map[string]json.RawMessage) {
		typ, ok := typed(tool)
		switch what := "the tool type " + quoted(typ); {
		case !ok || typ == "":
			c.refuse("a tool has no type")
		case openaiClientTool[typ]:
		case typ == "namespace" && depth == 0:
			openaiTools(tool, c, depth+1)
		case openaiWebSearch.MatchString(typ):
			c.server(WebSearch, what)
		case typ == "file_search":
			c.server(FileSearch, what)
		case typ == "code_interpreter":
			c.server(CodeExecution, what)
		case typ == "mcp":
			c.server(MCP, what)
		default:
			c.unknown(what)
		}
	})
}

// geminiName is how the Gemini API reads a member's name: its JSON parser takes the lowerCamelCase name
// and the snake_case one alike (googleSearch, google_search). Compared without case or underscores, two
// names it takes for one member are one.
func geminiName(k string) string { return strings.ToLower(strings.ReplaceAll(k, "_", "")) }

// geminiRequest reads a generateContent request: its tools and its maximum output (maxOutputTokens, plus
// the thinking budget, which the 2.5 models bill as output besides it).
func geminiRequest(m map[string]json.RawMessage, c *checker) ask {
	a := ask{output: defaultMaxOutput + defaultThinking}
	if present(m, "generationconfig") {
		if gc, err := object(m["generationconfig"], geminiName); err != nil {
			c.refuse("generationConfig: %v", err)
		} else {
			thinking := defaultThinking
			if present(gc, "thinkingconfig") {
				if tc, err := object(gc["thinkingconfig"], geminiName); err == nil {
					if b := count(tc["thinkingbudget"], -1); b >= 0 {
						thinking = b
					}
				}
			}
			a.output = count(gc["maxoutputtokens"], defaultMaxOutput) + thinking
		}
	}
	if present(m, "cachedcontent") {
		a.input += maxContext
	}
	eachTool(m, c, geminiName, func(tool map[string]json.RawMessage) {
		for k := range tool {
			switch what := "the tool " + quoted(k); k {
			case "functiondeclarations", "computeruse":
			case "googlesearch", "googlesearchretrieval":
				c.server(WebSearch, what)
			case "urlcontext":
				c.server(WebFetch, what)
			case "codeexecution":
				c.server(CodeExecution, what)
			default:
				c.unknown(what)
			}
		}
	})
	return a
}

// inspect reads a request's body: a JSON object, which a model request must also ask nothing the gateway
// cannot meter. It returns what the answer can cost at most, or why the request is refused (a sentence
// that follows "refuses this request: ").
func (g *Gateway) inspect(d *door, rt route, body []byte) (ask, string) {
	var name func(string) string
	if d.vendor == Gemini {
		name = geminiName
	}
	m, err := object(body, name)
	if err != nil {
		return ask{}, fmt.Sprintf("its body is not the JSON object the %s API takes (%v)", d.vendor, err)
	}
	if !rt.metered {
		return ask{}, ""
	}
	c := &checker{vendor: d.vendor, allowed: map[ServerTool]bool{}}
	for _, t := range g.opts.ServerTools {
		c.allowed[t] = true
	}
	d.allow.member(m, c)
	if d.vendor == Anthropic {
		anthropicEdits(m, c)
	}
	a := d.spec.request(m, c)
	a.input += len(body)
	return a, c.why
}
