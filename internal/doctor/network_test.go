package doctor

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

func TestNetworkFinding(t *testing.T) {
	t.Parallel()
	open, required := config.Default(), config.Default()
	open.Network.Mode = config.NetworkOpen
	required.Network.RequireKernel = true
	tests := []struct {
		name        string
		cfg         config.Config
		tcp, filter bool
		wantSaid    bool
		wantProblem bool
		want        string
	}{
		{"all in force", config.Default(), true, true, false, false, ""},
		{"no Landlock network rules", config.Default(), false, true, true, false, "the kernel has no Landlock network rules here (Landlock ABI 3"},
		{"no Landlock network rules, required", required, false, true, true, true, "network.require_kernel is true"},
		{"nothing at all", config.Default(), false, false, true, false, "neither Landlock network rules"},
		{"no socket filter", config.Default(), true, false, true, false, "no socket filter"},
		{"open", open, true, true, true, false, "network.mode is open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, said := networkFinding(tt.cfg, tt.tcp, tt.filter, "Landlock ABI 3; network rules need ABI 4 (Linux 6.7)")
			if said != tt.wantSaid || f.Problem != tt.wantProblem || !strings.Contains(f.Msg, tt.want) {
				t.Errorf("networkFinding = %+v, %v; want said %v, problem %v, a message with %q", f, said, tt.wantSaid, tt.wantProblem, tt.want)
			}
		})
	}
}

func TestFirewallFinding(t *testing.T) {
	t.Parallel()
	open := config.Default()
	open.Network.Mode = config.NetworkOpen
	for _, tt := range []struct {
		name     string
		cfg      config.Config
		separate bool
	}{{"the agent is ralph's user", config.Default(), false}, {"open", open, true}} {
		if f, said := Firewall(tt.cfg, sandbox.Config{Separate: tt.separate}); said {
			t.Errorf("%s: Firewall said %q, want nothing", tt.name, f)
		}
	}
	tests := []struct {
		supported bool
		want      string
	}{
		{true, "an owner-match firewall rule holds the agent's uid"},
		{false, "no owner-match firewall rule on the agent's uid (ralph lacks CAP_NET_ADMIN here): the kernel does not refuse the agent a connection to another host"},
	}
	for _, tt := range tests {
		f := firewallFinding(tt.supported, "ralph lacks CAP_NET_ADMIN here")
		if f.Problem || !strings.Contains(f.Msg, tt.want) {
			t.Errorf("firewallFinding(%v) = %+v, want no problem and a message with %q", tt.supported, f, tt.want)
		}
	}
}

// doctor says the firewall rule is off where the environment ralph is given (the boundary's Getenv) turns
// it off, whatever the process's own holds.
func TestFirewallTurnedOffByRalphsEnvironment(t *testing.T) {
	t.Parallel()
	off := func(key string) string {
		if key == sandbox.EnvFirewall {
			return "off"
		}
		return ""
	}
	f, said := Firewall(config.Default(), sandbox.Config{Separate: true, Getenv: off})
	if !said || f.Problem || !strings.Contains(f.Msg, "turned off by "+sandbox.EnvFirewall+"=off") {
		t.Errorf("Firewall = %+v, %v; want it said turned off by %s=off", f, said, sandbox.EnvFirewall)
	}
}
