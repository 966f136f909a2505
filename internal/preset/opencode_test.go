package preset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// opencode's config points each of its vendors' providers at ralph's gateway, at that vendor's URL there,
// with the gateway's key, and enables no other provider; agent.model's prefix picks the main vendor.
func TestOpencodeVendors(t *testing.T) {
	t.Parallel()
	p := opencode()
	env := p.GatewayEnv(Gateway{URL: "http://127.0.0.1:9", Key: "k", URLs: map[string]string{"anthropic": "http://127.0.0.1:9", "openai": "http://127.0.0.1:9/openai"}})
	var content string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
			content = v
		}
	}
	var cfg struct {
		Provider map[string]struct {
			Options map[string]string `json:"options"`
		} `json:"provider"`
		Enabled []string `json:"enabled_providers"`
	}
	if err := json.Unmarshal([]byte(content), &cfg); err != nil {
		t.Fatalf("OPENCODE_CONFIG_CONTENT %q: %v", content, err)
	}
	want := map[string]map[string]string{
		"anthropic": {"baseURL": "http://127.0.0.1:9/v1", "apiKey": "k"},
		"openai":    {"baseURL": "http://127.0.0.1:9/openai/v1", "apiKey": "k"},
	}
	got := map[string]map[string]string{}
	for name, pr := range cfg.Provider {
		got[name] = pr.Options
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"anthropic", "openai"}, cfg.Enabled); diff != "" {
		t.Errorf("enabled_providers (-want +got):\n%s", diff)
	}
	for model, want := range map[string]string{"": "anthropic", "claude-haiku-4-5": "anthropic", "anthropic/claude-sonnet-4-5": "anthropic",
		"openai/gpt-5.1-codex": "openai", "gemini/gemini-2.5-pro": "anthropic"} {
		if got := p.VendorFor(model); got != want {
			t.Errorf("VendorFor(%q) = %s, want %s", model, got, want)
		}
	}
	if got := claude().VendorFor("openai/gpt-5"); got != "anthropic" {
		t.Errorf("claude's VendorFor(openai/gpt-5) = %s: a single-vendor preset has one", got)
	}
	bad := p
	bad.More = []string{"anthropic"}
	if err := Check(bad); err == nil {
		t.Errorf("a preset naming its vendor twice passed Check")
	}
	bad.More = []string{"mistral"}
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), `"mistral"`) {
		t.Errorf("a preset with an unknown vendor in More: Check = %v", err)
	}
}
