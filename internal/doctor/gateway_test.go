package doctor

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// Copilot CLI without ralph's gateway holds a GitHub token ralph cannot proxy, bounded by premium requests:
// doctor says so. Through the gateway, or for a preset that then holds only its vendor's key, it says
// nothing.
func TestWithoutGateway(t *testing.T) {
	t.Parallel()
	cfg := func(preset string, gateway bool) config.Config {
		c := config.Default()
		c.Agent.Preset, c.Gateway.Enabled = preset, gateway
		return c
	}
	f, said := WithoutGateway(cfg("copilot", false))
	if !said || !f.Warn || !strings.Contains(f.Msg, "COPILOT_GITHUB_TOKEN") || !strings.Contains(f.Msg, "premium requests, not dollars") || !strings.Contains(f.Fix, "ANTHROPIC_API_KEY") {
		t.Errorf("copilot without the gateway: %+v, %v", f, said)
	}
	for _, c := range []config.Config{cfg("copilot", true), cfg("claude", false), cfg("command", false)} {
		if f, said := WithoutGateway(c); said {
			t.Errorf("%s (gateway %v): said %+v", c.Agent.Preset, c.Gateway.Enabled, f)
		}
	}
}

// opencode talks to several vendors: doctor says which of the others ralph's gateway serves, with which
// key, and warns of one it cannot (no key), naming the variable to set. Other presets have none.
func TestVendors(t *testing.T) {
	t.Parallel()
	cfg := func(preset, model string) config.Config {
		c := config.Default()
		c.Agent.Preset, c.Agent.Model = preset, model
		return c
	}
	fs := Vendors(cfg("opencode", ""), []string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o"})
	if len(fs) != 1 || fs[0].Warn || fs[0].Problem || !strings.Contains(fs[0].Msg, "opencode's openai models, with the key ralph holds in OPENAI_API_KEY") {
		t.Errorf("opencode with both keys: %+v", fs)
	}
	fs = Vendors(cfg("opencode", "openai/gpt-5.2"), []string{"OPENAI_API_KEY=o"})
	if len(fs) != 1 || !fs[0].Warn || !strings.Contains(fs[0].Msg, "ralph holds no anthropic key") || !strings.Contains(fs[0].Fix, "set ANTHROPIC_API_KEY") {
		t.Errorf("opencode on openai without an anthropic key: %+v", fs)
	}
	off := cfg("opencode", "")
	off.Gateway.Enabled = false
	for _, c := range []config.Config{cfg("claude", ""), cfg("codex", ""), off} {
		if fs := Vendors(c, []string{"ANTHROPIC_API_KEY=a"}); len(fs) != 0 {
			t.Errorf("%s (gateway %v): %+v", c.Agent.Preset, c.Gateway.Enabled, fs)
		}
	}
}
