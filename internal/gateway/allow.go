package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// The allow-lists: per vendor, the request members and headers the gateway forwards, and the beta features
// it knows how to meter. They hold what the presets' CLIs send (Claude Code, Codex, Gemini CLI, Copilot
// CLI and opencode, as captured from their requests) and what the gateway's checks read; anything else is
// refused, named, for a member or header may change what the vendor bills.

// anthropicMembers are the members of a Messages request ralph forwards. speed, container and mcp_servers
// are checked as anthropicRequest says; context_management's edits as anthropicEdits says.
var anthropicMembers = []string{"model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream",
	"temperature", "top_k", "top_p", "tools", "tool_choice", "thinking", "context_management", "output_format",
	"output_config", "speed", "container", "mcp_servers"}

// openaiMembers are the members of a Responses request ralph forwards; background, prompt and service_tier
// are checked as openaiRequest says.
var openaiMembers = []string{"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
	"reasoning", "store", "stream", "stream_options", "include", "prompt_cache_key", "client_metadata", "text",
	"max_output_tokens", "max_tool_calls", "temperature", "top_p", "top_logprobs", "metadata", "user",
	"safety_identifier", "service_tier", "truncation", "background", "prompt", "previous_response_id", "conversation"}

// geminiMembers are the members of a generateContent request ralph forwards, as geminiName reads them.
var geminiMembers = []string{"contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
	"generationConfig", "cachedContent"}

// commonHeaders are the request headers ralph forwards to every vendor (the credentials among them are
// replaced by rewrite): HTTP's own, and those of the vendors' SDKs (X-Stainless-*, by prefix).
var commonHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "Connection", "Content-Length",
	"Content-Type", "User-Agent", "Keep-Alive", "Authorization", "X-Api-Key", "X-Goog-Api-Key", "Sec-Fetch-Mode"}

// droppedHeaders are headers ralph takes and never forwards (rewrite drops them): cookies and what a proxy
// adds to say where a request came from.
var droppedHeaders = []string{"Cookie", "Proxy-Authorization", "Forwarded", "X-Forwarded-For", "X-Forwarded-Host",
	"X-Forwarded-Proto", "X-Real-Ip"}

// headerPrefixes are the prefixes of headers ralph forwards to every vendor: the SDKs' platform and retry
// headers.
var headerPrefixes = []string{"X-Stainless-"}

// The vendors' own headers the CLIs send: versions, session and window ids, their beta header (whose
// values betas checks). OpenAI's organization and project headers, which pick who pays, are not among them.
var (
	anthropicHeaders = []string{"Anthropic-Version", "Anthropic-Beta", "Anthropic-Dangerous-Direct-Browser-Access",
		"X-App", "X-Claude-Code-Session-Id", "X-Session-Id", "X-Session-Affinity", "X-Initiator", "X-Interaction-Type"}
	openaiHeaders = []string{"Openai-Beta", "Originator", "Session-Id", "Thread-Id", "X-Client-Request-Id",
		"X-Codex-Window-Id", "X-Codex-Turn-Metadata", "X-Codex-Beta-Features", "X-Session-Id", "X-Session-Affinity"}
	geminiHeaders = []string{"X-Goog-Api-Client", "X-Gemini-Api-Privileged-User-Id"}
)

// anthropicBetas are the anthropic-beta values ralph meters without being told: those the CLIs send, whose
// answers bill at the list prices and say their usage. Others (a million-token context, billed above the
// list prices; fast mode; compaction; files) are refused unless gateway.betas names them.
var anthropicBetas = []string{"claude-code-20250219", "oauth-2025-04-20", "interleaved-thinking-2025-05-14",
	"fine-grained-tool-streaming-2025-05-14", "context-management-2025-06-27", "thinking-token-count-2026-05-13",
	"advanced-tool-use-2025-11-20", "thinking-display-updates-2026-08-18", "structured-outputs-2025-11-13",
	"extended-cache-ttl-2025-04-11"}

// allowList is one vendor's lists, canonical.
type allowList struct {
	members   map[string]bool // as the vendor reads a member's name
	headers   map[string]bool // canonical header names
	betas     map[string]bool
	betaName  string // the vendor's beta header, canonical ("" when it has none)
	memberMsg string // the vendor's request, for messages
}

func newAllowList(v Vendor, extraBetas []string) allowList {
	l := allowList{members: map[string]bool{}, headers: map[string]bool{}, betas: map[string]bool{}}
	var members, headers, betas []string
	name := func(s string) string { return s }
	switch v {
	case Anthropic:
		members, headers, betas, l.betaName, l.memberMsg = anthropicMembers, anthropicHeaders, anthropicBetas, "Anthropic-Beta", "an Anthropic Messages request"
	case OpenAI:
		members, headers, l.betaName, l.memberMsg = openaiMembers, openaiHeaders, "Openai-Beta", "an OpenAI Responses request"
	case Gemini:
		members, headers, l.memberMsg = geminiMembers, geminiHeaders, "a Gemini generateContent request"
		name = geminiName
	}
	for _, m := range members {
		l.members[name(m)] = true
	}
	for _, h := range slices.Concat(commonHeaders, droppedHeaders, headers) {
		l.headers[http.CanonicalHeaderKey(h)] = true
	}
	for _, b := range append(slices.Clone(betas), extraBetas...) {
		l.betas[b] = true
	}
	return l
}

// header says why a request's headers are refused, or "": a header not on the lists, or a beta feature
// neither the defaults nor gateway.betas name.
func (l allowList) header(h http.Header) string {
	var unknown []string
	for k := range h {
		ck := http.CanonicalHeaderKey(k)
		if l.headers[ck] || slices.ContainsFunc(headerPrefixes, func(p string) bool { return strings.HasPrefix(ck, p) }) {
			continue
		}
		unknown = append(unknown, quoted(k))
	}
	if len(unknown) > 0 {
		return fmt.Sprintf("the header %s is not one ralph forwards: it forwards only the headers it knows the model's CLIs send, so that no header changes what the vendor bills", names(unknown))
	}
	if l.betaName == "" {
		return ""
	}
	var betas []string
	for _, v := range h.Values(l.betaName) {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.TrimSpace(b); b != "" && !l.betas[b] && !slices.Contains(betas, quoted(b)) {
				betas = append(betas, quoted(b))
			}
		}
	}
	if len(betas) > 0 {
		return fmt.Sprintf("the beta feature %s (%s) is not one ralph knows how to meter; to forward it, list it in `gateway.betas` in .github/ralph.yml", names(betas), strings.ToLower(l.betaName))
	}
	return ""
}

// member refuses, through c, a request member not on the list.
func (l allowList) member(m map[string]json.RawMessage, c *checker) {
	var unknown []string
	for k := range m {
		if !l.members[k] {
			unknown = append(unknown, quoted(k))
		}
	}
	if len(unknown) > 0 {
		c.refuse("the member %s is not one ralph forwards in %s: it forwards only the members it knows how to meter", names(unknown), l.memberMsg)
	}
}

// The context edits Anthropic makes before a request: clearing old thinking or tool results only shrinks
// the prompt the usage reports. Compaction summarizes with passes of its own, beyond max_tokens.
var (
	anthropicClearEdit   = regexp.MustCompile(`^clear_(thinking|tool_uses)_\d{8}$`)
	anthropicCompactEdit = regexp.MustCompile(`^compact_\d{8}$`)
)

// anthropicEdits checks context_management's edits.
func anthropicEdits(m map[string]json.RawMessage, c *checker) {
	if !present(m, "context_management") {
		return
	}
	cm, err := object(m["context_management"], nil)
	if err != nil {
		c.refuse("context_management: %v", err)
		return
	}
	for k := range cm {
		if k != "edits" {
			c.refuse("context_management has the member %s, which ralph does not know how to meter", quoted(k))
		}
	}
	edits, err := list(cm, "edits")
	if err != nil {
		c.refuse("context_management: %v", err)
	}
	for _, raw := range edits {
		e, err := object(raw, nil)
		if err != nil {
			c.refuse("a context edit: %v", err)
			continue
		}
		typ, ok := typed(e)
		switch {
		case !ok:
			c.refuse("a context edit's type is not a string")
		case anthropicClearEdit.MatchString(typ):
		case anthropicCompactEdit.MatchString(typ):
			c.refuse("context_management compaction (%s) runs summarizing passes beyond the request's max_tokens, so ralph cannot bound what it bills; leave it out (the CLI's own compaction works without it)", quoted(typ))
		default:
			c.refuse("the context edit %s is not one ralph knows how to meter", quoted(typ))
		}
	}
}

// maxNamed bounds the names a refusal lists: a request may carry any number.
const maxNamed = 5

// names lists quoted names for a refusal, sorted, the first maxNamed of them and how many more.
func names(q []string) string {
	slices.Sort(q)
	if len(q) <= maxNamed {
		return strings.Join(q, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(q[:maxNamed], ", "), len(q)-maxNamed)
}
