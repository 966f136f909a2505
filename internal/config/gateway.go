package config

import (
	"net/url"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// Gateway is the gateway: section: ralph's model gateway, between the agent and its model's API. With it,
// ralph holds the model key (the agent gets a loopback URL and a key good for one run), meters every
// request, and enforces agent.max_cost, agent.max_tokens and the budget: section.
type Gateway struct {
	// Enabled puts the gateway in front of a preset's CLI (true by default); false leaves the agent to
	// reach its model itself, with a key agent.env hands it. For preset command, Vendor decides.
	Enabled bool // enabled
	// Vendor is the model API a command agent speaks (anthropic, openai or gemini); set, the command gets
	// the gateway too. The presets know their own: claude speaks anthropic, codex openai, gemini gemini.
	Vendor string // vendor
	// Upstream is the vendor API's base URL the gateway forwards to ("" = the vendor's public host): a
	// proxy of your own, an enterprise endpoint, or a scripted model in tests.
	Upstream string // upstream
	// Upstreams are the base URLs of each vendor by name, for a preset whose CLI talks to several
	// (opencode: anthropic and openai); a vendor's entry here comes before Upstream.
	Upstreams map[string]string // upstreams
	// ServerTools are the tools the model's vendor runs itself and bills apart (web_search, web_fetch,
	// code_execution, file_search, mcp) that the agent may ask for; the gateway refuses any other, and
	// prices these per use. Default: none.
	ServerTools []string // server_tools
	// Betas are the beta features (anthropic-beta or openai-beta values, such as context-1m-2025-08-07) the
	// agent's CLI may ask for besides those ralph knows its presets send: the gateway refuses any other,
	// as a beta may bill above the list prices it meters at. Default: none.
	Betas []string // betas
	// Prices add to or replace entries of the built-in price table: model name (which also prices its
	// dated and -latest variants) to US dollars per million tokens, and per 1,000 uses of a server tool.
	Prices map[string]Price // prices
}

// Price is one entry of gateway.prices, in US dollars per million tokens.
type Price struct {
	Input      float64 // input (required)
	Output     float64 // output (required)
	CacheRead  float64 // cache_read: default, the input price
	CacheWrite float64 // cache_write: default, the input price
	// Calls are US dollars per 1,000 uses of a server tool (web_search: 10), by its name in server_tools;
	// a tool not named costs the built-in price.
	Calls map[string]float64
}

// Budget is the budget: section: spending limits across runs, in US dollars, that the model gateway
// enforces (agent.max_cost is the limit of one step).
type Budget struct {
	// Issue bounds what all the runs of one issue spend together, as its record counts it (0 = none).
	Issue float64 // issue
	// Day bounds what all the runs of the repository spend in one UTC day (0 = none).
	Day float64 // day
}

// The keys of the gateway: and budget: sections (the vendors and the presets that speak them are
// package preset's).
var (
	gatewayKeys = []string{"enabled", "vendor", "upstream", "upstreams", "server_tools", "betas", "prices"}
	// betaName is a beta feature's name, as the vendors' beta headers list them.
	betaName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._=-]{0,99}$`)
	// serverTools are the names of gateway.server_tools (the gateway's ServerTools).
	serverTools = []string{"web_search", "web_fetch", "code_execution", "file_search", "mcp"}
	priceKeys   = append([]string{"input", "output", "cache_read", "cache_write"}, serverTools...)
	budgetKeys  = []string{"issue", "day"}
)

// GatewayVendor is the model API ralph's gateway serves the agent, or "" when the agent runs without it.
func (c Config) GatewayVendor() string {
	if !c.Gateway.Enabled {
		return ""
	}
	if p, ok := preset.Lookup(c.Agent.Preset); ok {
		return p.VendorFor(c.Agent.Model)
	}
	return c.Gateway.Vendor
}

// GatewayUpstream is the base URL ralph's gateway forwards vendor's requests to: gateway.upstreams' entry
// for it, gateway.upstream for the main vendor, else "" (the vendor's public host).
func (c Config) GatewayUpstream(vendor string) string {
	if u := c.Gateway.Upstreams[vendor]; u != "" {
		return u
	}
	if vendor == c.GatewayVendor() {
		return c.Gateway.Upstream
	}
	return ""
}

// GatewayMore are the other model APIs ralph's gateway serves the agent besides GatewayVendor, for a
// preset whose CLI picks its vendor per model (opencode): each is served when ralph holds its key.
func (c Config) GatewayMore() []string {
	v := c.GatewayVendor()
	p, ok := preset.Lookup(c.Agent.Preset)
	if v == "" || !ok {
		return nil
	}
	var out []string
	for _, o := range append([]string{p.Vendor}, p.More...) {
		if o != v {
			out = append(out, o)
		}
	}
	return out
}

// PresetVendor is the model API a preset's CLI speaks for agent.model ("" for preset command), gateway
// or not.
func (c Config) PresetVendor() string {
	p, _ := preset.Lookup(c.Agent.Preset)
	return p.VendorFor(c.Agent.Model)
}

func (p *parser) gateway(n *yaml.Node, section string, g *Gateway) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(gatewayKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, gatewayKeys)
	for _, f := range pairs {
		switch f.name {
		case "enabled":
			g.Enabled, err = p.boolean(f.value, f.path)
		case "vendor":
			g.Vendor, err = p.choice(f.value, f.path, preset.VendorNames())
		case "upstream":
			if g.Upstream, err = p.str(f.value, f.path); err == nil && g.Upstream != "" {
				if why := checkUpstream(g.Upstream); why != "" {
					err = p.errorf(f.value, f.path, "%q %s", g.Upstream, why)
				}
			}
		case "upstreams":
			g.Upstreams = map[string]string{}
			if n := f.value; !isNull(n) && n.Kind != yaml.MappingNode {
				err = p.errorf(n, f.path, "must be a mapping of vendors (%s) to URLs", strings.Join(preset.VendorNames(), ", "))
				break
			}
			for _, u := range p.fields(f.value, f.path, preset.VendorNames()) {
				s, err := p.str(u.value, u.path)
				if err == nil {
					if why := checkUpstream(s); why != "" {
						err = p.errorf(u.value, u.path, "%q %s", s, why)
					}
				}
				if err != nil {
					p.report(err)
					continue
				}
				g.Upstreams[u.name] = s
			}
		case "server_tools":
			g.ServerTools, err = p.list(f.value, f.path, func(item *yaml.Node, key, s string) error {
				if !contains(serverTools, s) {
					return p.errorf(item, key, "%q is not a server tool ralph meters: one of %s", s, strings.Join(serverTools, ", "))
				}
				return nil
			})
		case "betas":
			g.Betas, err = p.list(f.value, f.path, func(item *yaml.Node, key, s string) error {
				if !betaName.MatchString(s) {
					return p.errorf(item, key, "%q is not a beta feature's name: one name each, as the anthropic-beta header lists them, such as context-1m-2025-08-07", s)
				}
				return nil
			})
		case "prices":
			g.Prices, err = p.prices(f.value, f.path)
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}

// checkUpstream says what is wrong with gateway.upstream, or "".
func checkUpstream(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "":
		return "is not a URL such as https://api.anthropic.com"
	case u.Scheme != "https" && u.Scheme != "http":
		return "must be an http or https URL"
	case u.User != nil:
		return "must not carry a user or password: ralph adds the key itself"
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or a fragment"
	}
	return ""
}

func (p *parser) prices(n *yaml.Node, key string) (map[string]Price, error) {
	out := map[string]Price{}
	if isNull(n) {
		return out, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, key, "must be a mapping of model names to prices, such as `claude-sonnet-4-5: {input: 3, output: 15}`")
	}
	for _, m := range p.fields(n, key, nil) {
		if strings.TrimSpace(m.name) == "" {
			p.report(p.errorf(m.key, m.path, "must name a model"))
			continue
		}
		if m.value.Kind != yaml.MappingNode {
			p.report(p.errorf(m.value, m.path, "must be a mapping with the keys %s, in US dollars per million tokens (per 1,000 uses for a server tool)", strings.Join(priceKeys, ", ")))
			continue
		}
		pairs := p.fields(m.value, m.path, priceKeys)
		pr := Price{CacheRead: -1, CacheWrite: -1}
		seen := map[string]bool{}
		for _, f := range pairs {
			unit := "per million tokens, such as 3 or 0.30"
			if contains(serverTools, f.name) {
				unit = "per 1,000 uses, such as 10"
			}
			seen[f.name] = true
			v, err := p.rate(f.value, f.path, unit)
			if err != nil {
				p.report(err)
				continue
			}
			switch f.name {
			case "input":
				pr.Input = v
			case "output":
				pr.Output = v
			case "cache_read":
				pr.CacheRead = v
			case "cache_write":
				pr.CacheWrite = v
			default:
				if pr.Calls == nil {
					pr.Calls = map[string]float64{}
				}
				pr.Calls[f.name] = v
			}
		}
		for _, k := range []string{"input", "output"} {
			if !seen[k] && !p.unknown[m.path] { // a misspelt key is reported as such, not also as a missing one
				p.report(p.errorf(m.value, m.path+"."+k, "must be set: US dollars per million %s tokens", k))
			}
		}
		if pr.CacheRead < 0 {
			pr.CacheRead = pr.Input
		}
		if pr.CacheWrite < 0 {
			pr.CacheWrite = pr.Input
		}
		out[m.name] = pr
	}
	return out, nil
}

// rate decodes a price in US dollars per unit: zero or more (a model of your own may be free).
func (p *parser) rate(n *yaml.Node, key, unit string) (float64, error) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!float" && tag != "!!int") {
		return 0, p.errorf(n, key, "must be US dollars %s, not %s", unit, describe(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || f != f || f < 0 || f > 1e6 {
		return 0, p.errorf(n, key, "must be US dollars %s, not %s", unit, describe(n))
	}
	return f, nil
}

func (p *parser) budget(n *yaml.Node, section string, b *Budget) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(budgetKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, budgetKeys)
	for _, f := range pairs {
		switch f.name {
		case "issue":
			b.Issue, err = p.money(f.value, f.path)
		case "day":
			b.Day, err = p.money(f.value, f.path)
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}

// checkGateway checks what the gateway's settings and the agent's must agree on, once the whole file is
// read (the sections may come in any order). at finds a key's node by its dotted path.
func (p *parser) checkGateway(c *Config, at map[string]*yaml.Node) error {
	vendor := c.GatewayVendor()
	if n, ok := at["gateway.vendor"]; ok {
		if pr, ok := preset.Lookup(c.Agent.Preset); ok && c.Gateway.Vendor != pr.Vendor {
			return p.errorf(n, "gateway.vendor", "preset %s speaks %s; gateway.vendor applies to preset command", c.Agent.Preset, pr.Vendor)
		}
	}
	if pr, ok := preset.Lookup(c.Agent.Preset); ok && len(pr.More) > 0 && vendor != "" {
		n, set := at["agent.model"]
		if prov, _, ok := strings.Cut(c.Agent.Model, "/"); set && ok && pr.VendorFor(c.Agent.Model) != prov {
			var forms []string
			for _, v := range append([]string{pr.Vendor}, pr.More...) {
				forms = append(forms, v+"/<model>")
			}
			return p.errorf(n, "agent.model", "names the provider %q, which %s does not reach through ralph's model gateway: write %s",
				prov, pr.Title, preset.Join(forms, "or"))
		}
	}
	why := "needs ralph's model gateway, which meters what the agent spends"
	switch {
	case c.Agent.Preset == "command" && vendor == "":
		why += ": set gateway.vendor to the API your command speaks (anthropic, openai or gemini)"
	case vendor == "":
		why += ": remove gateway.enabled: false"
	}
	for _, k := range []string{"agent.max_tokens", "budget.issue", "budget.day"} {
		if n, ok := at[k]; ok && vendor == "" {
			return p.errorf(n, k, "%s", why)
		}
	}
	if n, ok := at["agent.max_cost"]; ok && vendor == "" {
		pr, ok := preset.Lookup(c.Agent.Preset)
		switch {
		case ok && pr.ReportsCost:
			// Without the gateway, the CLI's own report of its cost is what there is.
		case !ok:
			return p.errorf(n, "agent.max_cost", "%s", why)
		default:
			return p.errorf(n, "agent.max_cost", "cannot be enforced with preset %s without ralph's model gateway: its CLI reports tokens but no cost; remove gateway.enabled: false, or use agent.max_turns", c.Agent.Preset)
		}
	}
	if vendor == "" {
		return nil
	}
	names := make([]string, 0, len(c.Agent.Env))
	for k := range c.Agent.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v, _ := preset.VendorOf(vendor)
		for _, b := range v.BaseURLs {
			if strings.EqualFold(k, b.Var) {
				return p.errorf(at["agent.env."+k], "agent.env."+k, "is ralph's to set: the agent reaches its model through ralph's gateway; put your endpoint in gateway.upstream instead")
			}
		}
	}
	return nil
}
