package engine

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// EnvResolve is the variable of ralph's own environment that fixes where ralph's network proxy finds
// names, "name=address,…", before DNS: a registry mirror on the runner's network, or a test's server.
const EnvResolve = "RALPH_NETWORK_RESOLVE"

// refusedMax bounds the refused hosts one run records: the agent chooses them.
const refusedMax = netproxy.MaxRefused

// allowlisted says whether the agent's network is the allow-list (network.mode).
func (r *runner) allowlisted() bool { return r.cfg.Network.Mode != config.NetworkOpen }

// getenv reads ralph's own environment (AgentEnv).
func (r *runner) getenv(name string) string { return agent.Getenv(r.baseEnv, name) }

// openNetwork starts ralph's network proxy for one run of the agent or of a verify command, allowing
// network.allow with the defaults and, should a CLI send its model requests through the proxy rather than
// straight to it, the model gateway at gatewayURL (""for none). It returns nil with network.mode: open,
// after saying loudly what that means.
func (r *runner) openNetwork(what, gatewayURL string) (*netproxy.Proxy, error) {
	if !r.allowlisted() {
		r.log.Warnf("network.mode is open: %s reaches any host on the network, not only ralph's model gateway and the allow-list; a prompt-injected agent can send what it reads anywhere", what)
		return nil, nil
	}
	hosts, err := netproxy.ParseHosts(r.getenv(EnvResolve))
	if err != nil {
		return nil, fmt.Errorf("%s in ralph's environment: %w", EnvResolve, err)
	}
	up, err := netproxy.UpstreamFromEnv(r.getenv)
	if err != nil {
		return nil, err
	}
	allow := r.cfg.Network.Hosts()
	if v := gateway.Vendor(r.cfg.PresetVendor()); v != "" && r.cfg.GatewayVendor() == "" {
		// gateway.enabled: false: the preset's CLI reaches its model itself, at the vendor's API.
		if u, err := url.Parse(v.DefaultUpstream()); err == nil {
			allow = append(allow, u.Host)
		}
	}
	if gatewayURL != "" {
		if u, err := url.Parse(gatewayURL); err == nil {
			allow = append(allow, u.Host)
			if a, err := netip.ParseAddr(u.Hostname()); err == nil {
				hosts[u.Hostname()] = []netip.Addr{a}
			}
		}
	}
	p, err := netproxy.Start(netproxy.Options{Allow: allow, Hosts: hosts, Upstream: up})
	if err != nil {
		return nil, fmt.Errorf("starting ralph's network proxy: %w", err)
	}
	return p, nil
}

// closeNetwork ends the run's proxy, and with it every connection through it, and adds the hosts it
// refused to the step's, once each, saying them in the log.
func (r *runner) closeNetwork(what string, p *netproxy.Proxy) {
	if p == nil {
		return
	}
	ic := r.ic
	_ = p.Close()
	hosts, more := p.Refused()
	for _, h := range hosts {
		if ic.noteRefused(h) {
			r.log.Warnf("ralph's network proxy refused %s the host %s: it is not on the allow-list (to allow it: network.allow: [%s])", what, strconv.Quote(h), strconv.Quote(h))
		}
	}
	if more > 0 {
		ic.refusedMore += more
		r.log.Warnf("ralph's network proxy refused %s %d more hosts", what, more)
	}
}

// refusedLen bounds a recorded host, in bytes: the record lives in a comment GitHub bounds.
const refusedLen = 100

// noteRefused adds a refused host to the step's, unless it is there or the list is full; it says
// whether the host is new.
func (ic *issue) noteRefused(h string) bool {
	if len(h) > refusedLen {
		h = strings.ToValidUTF8(h[:refusedLen], "") + "…"
	}
	for _, r := range ic.refused {
		if r == h {
			return false
		}
	}
	if len(ic.refused) >= refusedMax {
		ic.refusedMore++
		return false
	}
	ic.refused = append(ic.refused, h)
	return true
}

// firewall installs, for one run of the agent or of a verify command, the owner-match rule that holds the
// agent's uid to ralph's ports on loopback (sandbox.Boundary.Firewall), where ralph can: where it cannot,
// the boundary's line in the log said so once. A rule that fails to install is said, and the run goes on
// under the kernel's other rules. closeFirewall removes it.
func (r *runner) firewall(what string, b *sandbox.Boundary) *sandbox.Firewall {
	if !r.allowlisted() {
		return nil
	}
	fw, err := b.Firewall()
	if err != nil {
		r.log.Warnf("network: %s runs without the owner-match firewall rule on its uid: %v", what, err)
	}
	return fw
}

// closeFirewall removes the run's owner-match rule, if any.
func (r *runner) closeFirewall(fw *sandbox.Firewall) {
	if err := fw.Close(); err != nil {
		r.log.Warnf("network: removing the owner-match firewall rule: %v", err)
	}
}

// proxyEnv is env with ralph's proxy in place of any other (agent.WithProxy); nil p leaves env as it is
// (network.mode: open).
func proxyEnv(env []string, p *netproxy.Proxy) []string {
	if p == nil {
		return env
	}
	return agent.WithProxy(env, p.URL())
}

// ports are the TCP ports the agent may connect to: the proxy's and the gateway's.
func ports(p *netproxy.Proxy, gatewayURL string) []int {
	var out []int
	if p != nil {
		out = append(out, p.Port())
	}
	if u, err := url.Parse(gatewayURL); err == nil && gatewayURL != "" {
		if _, ps, err := net.SplitHostPort(u.Host); err == nil {
			if n, err := strconv.Atoi(ps); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// refusedSection is the status comment's list of the hosts the issue's agent was refused, each once,
// quoted inert (the agent chose them), with the line of the config that would allow them.
func refusedSection(rec Record) string {
	if len(rec.Refused) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Network refused\n\nralph's network proxy refused the agent these hosts (they are not on the allow-list, `network.allow`):\n\n")
	var quoted []string
	for _, h := range rec.Refused {
		fmt.Fprintf(&b, "- `%s`\n", inertCode(h))
		quoted = append(quoted, strconv.Quote(inertCode(h)))
	}
	fmt.Fprintf(&b, "\nIf the agent needs them, allow them in `.github/ralph.yml`:\n\n```yaml\nnetwork:\n  allow: [%s]\n```\n", strings.Join(quoted, ", "))
	return b.String()
}

// RefusedLines are what a door prints of a run's refused hosts: each once, and the config line that would
// allow them; nil when none was refused.
func RefusedLines(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	var lines, quoted []string
	for _, h := range hosts {
		lines = append(lines, "ralph's network proxy refused the agent `"+inertCode(h)+"`")
		quoted = append(quoted, strconv.Quote(inertCode(h)))
	}
	return append(lines, "to allow them, add to .github/ralph.yml: network.allow: ["+strings.Join(quoted, ", ")+"]")
}

// inertCode is a host as code in Markdown: the proxy keeps hosts to host characters, and anything else is
// made inert and stripped of backticks, which would end the code span.
func inertCode(h string) string {
	return strings.ReplaceAll(Inert(h), "`", "'")
}
