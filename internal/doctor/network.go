package doctor

import (
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Network says what holds the agent to the network's allow-list here, when something is missing: the
// kernel's Landlock network rules (ABI 4, Linux 6.7) confine its TCP connections to ralph's proxy and
// gateway, the socket filter refuses its other sockets. With network.require_kernel the missing rules are
// a problem (Start refuses to run); with network.mode: open, that the agent reaches any host. Nothing to say
// (ok false) where all is in force.
func Network(cfg config.Config) (Finding, bool) {
	tcp, filter, why := sandbox.NetworkSupport()
	return networkFinding(cfg, tcp, filter, why)
}

func networkFinding(cfg config.Config, tcp, filter bool, why string) (Finding, bool) {
	switch {
	case cfg.Network.Mode == config.NetworkOpen:
		return ok("network: network.mode is open, so the agent reaches any host (not only the model gateway and the allow-list)"), true
	case !tcp && cfg.Network.RequireKernel:
		return problem(fmt.Sprintf("network: the kernel cannot hold the agent to the allow-list here (%s), and network.require_kernel is true", why),
			"run on Linux 6.7 or later (Landlock ABI 4), or set network.require_kernel: false to rely on ralph's proxy and socket filter alone"), true
	case !tcp && filter:
		return ok("network: the kernel has no Landlock network rules here (%s): the agent's TCP connections are not confined to ralph's proxy and gateway (its UDP, raw and other sockets are refused); network.require_kernel: true refuses to run so", why), true
	case !tcp:
		return ok("network: neither Landlock network rules (%s) nor a socket filter here: only the agent's proxy settings send it through ralph's proxy; network.require_kernel: true refuses to run so", why), true
	case !filter:
		return ok("network: no socket filter for this machine: the agent's UDP and raw sockets are not refused (its TCP connections are confined to ralph's proxy and gateway)"), true
	}
	return Finding{}, false
}

// Firewall says whether an owner-match firewall rule holds the agent's uid to ralph's proxy and gateway
// ports on loopback here: where the agent runs as a user of its own (sb.Separate) under the allow-list.
// Without CAP_NET_ADMIN (the Action's default container) that is said, not a problem: the other levels
// hold. Nothing to say (ok false) where the agent runs as ralph's user or the network is open.
func Firewall(cfg config.Config, sb sandbox.Config) (Finding, bool) {
	if cfg.Network.Mode == config.NetworkOpen || !sb.Separate {
		return Finding{}, false
	}
	supported, why := sandbox.FirewallSupport(sb.Getenv)
	return firewallFinding(supported, why), true
}

func firewallFinding(supported bool, why string) Finding {
	if supported {
		return ok("network: an owner-match firewall rule holds the agent's uid to ralph's proxy and gateway ports on 127.0.0.1 and ::1: it reaches no other host, by any protocol")
	}
	return ok("network: no owner-match firewall rule on the agent's uid (%s): the kernel does not refuse the agent a connection to another host on ralph's proxy's or gateway's port; ralph installs the rule where it holds CAP_NET_ADMIN (as root outside a container, or in a container given --cap-add=NET_ADMIN)", why)
}
