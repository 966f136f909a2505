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
