package session

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// EnvResolve is the variable of ralph's own environment that fixes where ralph's network proxy finds
// names, "name=address,…", before DNS: a registry mirror on the runner's network, or a test's server.
const EnvResolve = "RALPH_NETWORK_RESOLVE"

// allowlisted says whether the agent's network is the allow-list (network.mode).
func (r *Session) allowlisted() bool { return r.cfg.Network.Mode != config.NetworkOpen }

// getenv reads ralph's own environment (AgentEnv).
func (r *Session) getenv(name string) string { return agent.Getenv(r.baseEnv, name) }

// openNetwork starts ralph's network proxy for one run of the agent or of a verify command, allowing
// network.allow with the defaults and, should a CLI send its model requests through the proxy rather than
// straight to it, the model gateway at gatewayURL (""for none). It returns nil with network.mode: open,
// after saying loudly what that means.
func (r *Session) openNetwork(what, gatewayURL string) (*netproxy.Proxy, error) {
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
func (r *Session) closeNetwork(what string, p *netproxy.Proxy) {
	if p == nil {
		return
	}
	_ = p.Close()
	hosts, more := p.Refused()
	for _, h := range hosts {
		if r.notes.Refused(h) {
			r.log.Warnf("ralph's network proxy refused %s the host %s: it is not on the allow-list (to allow it: network.allow: [%s])", what, strconv.Quote(h), strconv.Quote(h))
		}
	}
	if more > 0 {
		r.notes.RefusedMore(more)
		r.log.Warnf("ralph's network proxy refused %s %d more hosts", what, more)
	}
}

// firewall installs, for one run of the agent or of a verify command, the owner-match rule that holds the
// agent's uid to ralph's ports on loopback (sandbox.Boundary.Firewall), where ralph can: where it cannot,
// the boundary's line in the log said so once. A rule that fails to install is said, and the run goes on
// under the kernel's other rules. closeFirewall removes it.
func (r *Session) firewall(what string, b *sandbox.Boundary) *sandbox.Firewall {
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
func (r *Session) closeFirewall(fw *sandbox.Firewall) {
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
