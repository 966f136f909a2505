package gateway

import (
	"regexp"
	"strings"
)

// Price is what a model costs: tokens in US dollars per million, and the server tools the vendor runs for it
// in US dollars per 1,000 uses.
type Price struct {
	Input      float64 `json:"input"`       // prompt tokens read without a cache
	Output     float64 `json:"output"`      // generated tokens, reasoning ("thinking") included
	CacheRead  float64 `json:"cache_read"`  // prompt tokens read from the vendor's prompt cache
	CacheWrite float64 `json:"cache_write"` // prompt tokens written to the cache (Anthropic bills them apart)
	// Calls price each server tool the vendor bills per use (a search), on top of the tokens its results
	// add to the prompt, per 1,000 uses.
	Calls map[ServerTool]float64 `json:"calls,omitempty"`
}

// Prices maps a model name to its price. A name prices that model and its dated or -latest variants
// ("claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929", "gpt-5" prices "gpt-5-2025-08-07"), and no
// other: "o3" does not price "o3-pro".
type Prices map[string]Price

// defaultPrices are the vendors' list prices for their current models, as published when this table was
// written (standard tier, prompts up to 200k tokens; a model without a prompt cache has its input price as
// its cache price). They are defaults: gateway.prices in the config replaces or adds any model, and a model
// the table does not know is priced at the dearest of each part of its vendor's table (see For), so that a
// budget errs on the side of stopping early rather than late.
var defaultPrices = map[Vendor]Prices{
	Anthropic: {
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.3},
	},
	OpenAI: {
		"gpt-5.2":            {Input: 1.75, Output: 14, CacheRead: 0.175},
		"gpt-5.2-codex":      {Input: 1.75, Output: 14, CacheRead: 0.175},
		"gpt-5.2-pro":        {Input: 21, Output: 168, CacheRead: 21},
		"gpt-5.1":            {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.1-codex":      {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.1-codex-max":  {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.1-codex-mini": {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5":              {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-codex":        {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":         {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":         {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-5-pro":          {Input: 15, Output: 120, CacheRead: 15},
		"gpt-4.1":            {Input: 2, Output: 8, CacheRead: 0.5, Calls: map[ServerTool]float64{WebSearch: 25}},
		"gpt-4.1-mini":       {Input: 0.4, Output: 1.6, CacheRead: 0.1, Calls: map[ServerTool]float64{WebSearch: 25}},
		"gpt-4.1-nano":       {Input: 0.1, Output: 0.4, CacheRead: 0.025, Calls: map[ServerTool]float64{WebSearch: 25}},
		"gpt-4o":             {Input: 2.5, Output: 10, CacheRead: 1.25, Calls: map[ServerTool]float64{WebSearch: 25}},
		"gpt-4o-mini":        {Input: 0.15, Output: 0.6, CacheRead: 0.075, Calls: map[ServerTool]float64{WebSearch: 25}},
		"o3":                 {Input: 2, Output: 8, CacheRead: 0.5},
		"o3-pro":             {Input: 20, Output: 80, CacheRead: 20},
		"o3-mini":            {Input: 1.1, Output: 4.4, CacheRead: 0.55},
		"o4-mini":            {Input: 1.1, Output: 4.4, CacheRead: 0.275},
		"o1":                 {Input: 15, Output: 60, CacheRead: 7.5},
		"o1-pro":             {Input: 150, Output: 600, CacheRead: 150},
		"codex-mini-latest":  {Input: 1.5, Output: 6, CacheRead: 0.375},
	},
	Gemini: {
		"gemini-3-pro-preview":   {Input: 2, Output: 12, CacheRead: 0.2},
		"gemini-3-pro":           {Input: 2, Output: 12, CacheRead: 0.2},
		"gemini-3-flash-preview": {Input: 0.5, Output: 3, CacheRead: 0.05},
		"gemini-2.5-pro":         {Input: 1.25, Output: 10, CacheRead: 0.31},
		"gemini-2.5-flash":       {Input: 0.3, Output: 2.5, CacheRead: 0.075},
		"gemini-2.5-flash-lite":  {Input: 0.1, Output: 0.4, CacheRead: 0.025},
		"gemini-2.0-flash":       {Input: 0.1, Output: 0.4, CacheRead: 0.025},
		"gemini-2.0-flash-lite":  {Input: 0.075, Output: 0.3, CacheRead: 0.075},
	},
}

// callPrices are the vendors' list prices of the server tools they bill per use, in US dollars per 1,000
// uses, as published when this table was written; a tool listed at 0 costs only the tokens it adds to the
// prompt, which the usage counts. A vendor's tool that is not listed here is one ralph cannot meter, and the
// gateway refuses it whatever gateway.server_tools says. A model's own entry in defaultPrices overrides
// these (OpenAI's non-reasoning models pay more for a search).
//   - Anthropic: web search $10 per 1,000 searches (usage.server_tool_use.web_search_requests); web fetch
//     and the MCP connector, tokens only. Code execution is billed by container time, which no answer
//     reports: not meterable.
//   - OpenAI: web search $10 per 1,000 calls ($25 with the non-reasoning models), file search $2.50 per
//     1,000 calls, code interpreter $0.03 per container, counted per call ($30 per 1,000: every call is
//     taken to start a container); hosted MCP, tokens only. Counted from the answer's output items.
//   - Gemini: grounding with Google Search $35 per 1,000 grounded prompts (Gemini 2.5; Gemini 3 bills $14
//     per 1,000 search queries): ralph counts each search query of a grounded answer, at least one, at $35,
//     the dearer, so that the meter never counts less than the bill; URL context and code execution, tokens
//     only.
var callPrices = map[Vendor]map[ServerTool]float64{
	Anthropic: {WebSearch: 10, WebFetch: 0, MCP: 0},
	OpenAI:    {WebSearch: 10, FileSearch: 2.5, CodeExecution: 30, MCP: 0},
	Gemini:    {WebSearch: 35, WebFetch: 0, CodeExecution: 0},
}

// DefaultPrices is a copy of the built-in price table of vendor, every model with the vendor's prices per
// use of its server tools.
func DefaultPrices(v Vendor) Prices {
	out := Prices{}
	for k, p := range defaultPrices[v] {
		calls := map[ServerTool]float64{}
		for t, c := range callPrices[v] {
			calls[t] = c
		}
		for t, c := range p.Calls {
			calls[t] = c
		}
		p.Calls = calls
		out[k] = p
	}
	return out
}

// With is the table with overrides added. An override of a model replaces its entry's token prices whole;
// a server tool it does not price keeps the replaced entry's price per use, or, for a model the table did
// not have, the table's dearest.
func (p Prices) With(overrides Prices) Prices {
	out := Prices{}
	for k, v := range p {
		out[k] = v
	}
	dearest := p.Dearest()
	for k, v := range overrides {
		base, ok := p[k]
		if !ok {
			base = dearest
		}
		calls := map[ServerTool]float64{}
		for t, c := range base.Calls {
			calls[t] = c
		}
		for t, c := range v.Calls {
			calls[t] = c
		}
		v.Calls = calls
		out[k] = v
	}
	return out
}

// variant is what a dated or -latest name adds to its model's: "-20250929", "-2025-08-07", "-latest".
var variant = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// For is the price of model: the entry named model, or, for a dated or -latest variant, the entry named
// without the suffix (matched as that name). known is false when there is none; the price is then the
// dearest of each of the table's prices (Dearest), so that an unpriced model is never counted as cheaper
// than the dearest the vendor lists.
func (p Prices) For(model string) (price Price, matched string, known bool) {
	m := strings.TrimPrefix(strings.ToLower(model), "models/")
	base := variant.ReplaceAllString(m, "")
	for name, q := range p {
		switch n := strings.ToLower(name); {
		case m == "":
		case n == m:
			return q, name, true
		case n == base && base != "" && (matched == "" || name < matched): // the same answer every time
			price, matched = q, name
		}
	}
	if matched != "" {
		return price, matched, true
	}
	return p.Dearest(), "", false
}

// Dearest is the dearest of each part of the table's prices: the input price of its dearest input, the
// output price of its dearest output, and so on, each server tool included.
func (p Prices) Dearest() Price {
	var d Price
	for _, q := range p {
		d.Input = max(d.Input, q.Input)
		d.Output = max(d.Output, q.Output)
		d.CacheRead = max(d.CacheRead, q.CacheRead)
		d.CacheWrite = max(d.CacheWrite, q.CacheWrite)
		for t, c := range q.Calls {
			if d.Calls == nil {
				d.Calls = map[ServerTool]float64{}
			}
			d.Calls[t] = max(d.Calls[t], c)
		}
	}
	return d
}

// CallPrice is what one server tool costs model, in US dollars per 1,000 uses.
func (p Prices) CallPrice(model string, t ServerTool) float64 {
	price, _, _ := p.For(model)
	return price.Calls[t]
}

// Cost is what u costs at price p, in US dollars.
func (p Price) Cost(u Tokens) float64 {
	plain := u.Input - u.CacheRead - u.CacheWrite
	if plain < 0 {
		plain = 0
	}
	return (float64(plain)*p.Input + float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite + float64(u.Output)*p.Output) / 1e6
}
