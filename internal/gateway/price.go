package gateway

import (
	"sort"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`       // prompt tokens read without a cache
	Output     float64 `json:"output"`      // generated tokens, reasoning ("thinking") included
	CacheRead  float64 `json:"cache_read"`  // prompt tokens read from the vendor's prompt cache
	CacheWrite float64 `json:"cache_write"` // prompt tokens written to the cache (Anthropic bills them apart)
}

// Prices maps a model name, or the start of one ("claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929"),
// to its price. The longest matching name wins.
type Prices map[string]Price

// defaultPrices are the vendors' list prices for the models the presets use, as published when this table
// was written (standard tier, prompts up to 200k tokens). They are defaults: gateway.prices in the config
// replaces or adds any model, and a model the table does not know is priced at its vendor's most expensive
// entry (see For), so that a budget errs on the side of stopping early rather than late.
var defaultPrices = map[Vendor]Prices{
	Anthropic: {
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	},
	OpenAI: {
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-5-pro":         {Input: 15, Output: 120, CacheRead: 15},
		"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
		"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
		"o3":                {Input: 2, Output: 8, CacheRead: 0.5},
		"o4-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.275},
		"codex-mini-latest": {Input: 1.5, Output: 6, CacheRead: 0.375},
	},
	Gemini: {
		"gemini-2.5-pro":        {Input: 1.25, Output: 10, CacheRead: 0.31},
		"gemini-2.5-flash":      {Input: 0.3, Output: 2.5, CacheRead: 0.075},
		"gemini-2.5-flash-lite": {Input: 0.1, Output: 0.4, CacheRead: 0.025},
		"gemini-3-pro":          {Input: 2, Output: 12, CacheRead: 0.2},
	},
}

// DefaultPrices is a copy of the built-in price table of vendor.
func DefaultPrices(v Vendor) Prices {
	out := Prices{}
	for k, p := range defaultPrices[v] {
		out[k] = p
	}
	return out
}

// With is the table with overrides added (an override of a model replaces its entry whole).
func (p Prices) With(overrides Prices) Prices {
	out := Prices{}
	for k, v := range p {
		out[k] = v
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out
}

// For is the price of model: the entry with the longest name that model starts with. known is false when no
// entry matches; the price is then the table's most expensive entry (by input plus output), so that an
// unpriced model is never counted as free.
func (p Prices) For(model string) (price Price, matched string, known bool) {
	m := strings.TrimPrefix(strings.ToLower(model), "models/")
	best := ""
	for name := range p {
		n := strings.ToLower(name)
		// A name matches a whole word of the model's: "gpt-5" prices "gpt-5.1-codex", not "gpt-50".
		if strings.HasPrefix(m, n) && len(n) > len(best) && (len(m) == len(n) || !isAlnum(m[len(n)])) {
			best = name
		}
	}
	if best != "" {
		return p[best], best, true
	}
	names := make([]string, 0, len(p))
	for name := range p {
		names = append(names, name)
	}
	sort.Strings(names) // the same answer every time, ties included
	for _, name := range names {
		if q := p[name]; q.Input+q.Output > price.Input+price.Output {
			price, matched = q, name
		}
	}
	return price, matched, false
}

func isAlnum(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' }

// Cost is what u costs at price p, in US dollars.
func (p Price) Cost(u Tokens) float64 {
	plain := u.Input - u.CacheRead - u.CacheWrite
	if plain < 0 {
		plain = 0
	}
	return (float64(plain)*p.Input + float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite + float64(u.Output)*p.Output) / 1e6
}
