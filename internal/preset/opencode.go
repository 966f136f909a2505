package preset

import (
	"encoding/json"
	"strings"
)

func opencode() Preset {
	return Preset{
		Name:    "opencode",
		Title:   "opencode",
		Program: "opencode",
		Package: "opencode-ai",
		Version: "1.18.18",
		// opencode picks its provider per model: through ralph's gateway its anthropic and openai providers
		// are the ones it reaches, the main model's vendor from agent.model's prefix (anthropic by default).
		Vendor:     "anthropic",
		More:       []string{"openai"},
		KeyVars:    []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"},
		Args:       opencodeArgs,
		GatewayEnv: opencodeGatewayEnv,
		Stream:     OpencodeJSONL,
		// Its project config (providers, agents, MCP servers, permissions) and its directory of agents,
		// commands, modes, plugins and tools (plugins and tools are code it runs).
		ConfigPaths: []string{"opencode.json", "opencode.jsonc", ".opencode/**"},
	}
}

// OpencodeModel is the model opencode asks ralph's gateway for when agent.model is not set.
const OpencodeModel = "anthropic/claude-sonnet-4-5"

// opencodeArgs is opencode's non-interactive invocation, `opencode run` (the prompt comes on stdin):
//   - --format json: one JSON event per line;
//   - --auto: permissions not explicitly denied are granted without asking (headless, nobody could answer);
//   - -m from agent.model, as opencode names models (provider/model; a bare model is Anthropic's).
//     opencode has no turn or cost flag: ralph enforces agent.max_turns from the events, and
//     agent.max_cost through its gateway.
func opencodeArgs(s Settings) []string {
	model := s.Model
	switch {
	case model == "":
		model = OpencodeModel
	case !strings.Contains(model, "/"):
		model = "anthropic/" + model
	}
	return []string{"run", "--format", "json", "--auto", "-m", model}
}

// opencodeGatewayEnv gives opencode a config (OPENCODE_CONFIG_CONTENT, which it merges over its others)
// whose anthropic and openai providers are ralph's gateway, each at its vendor's URL there, with the
// gateway's key (their SDKs want the URL with /v1), and turns off its fetching of the model list and its
// updates. The providers are listed in enabled_providers, so that no other (one the repository's
// opencode.json adds, say) is reachable with a key of its own.
func opencodeGatewayEnv(g Gateway) []string {
	providers := map[string]any{}
	var enabled []string
	p := opencode()
	for _, v := range append([]string{p.Vendor}, p.More...) {
		providers[v] = map[string]any{"options": map[string]string{"baseURL": g.URLs[v] + "/v1", "apiKey": g.Key}}
		enabled = append(enabled, v)
	}
	cfg, _ := json.Marshal(map[string]any{"provider": providers, "enabled_providers": enabled, "share": "disabled"})
	return []string{
		"OPENCODE_CONFIG_CONTENT=" + string(cfg),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
	}
}
