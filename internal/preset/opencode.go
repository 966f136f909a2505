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
		// Through ralph's gateway opencode's anthropic provider is the one it reaches.
		Vendor:     "anthropic",
		KeyVars:    []string{"ANTHROPIC_API_KEY"},
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
// whose anthropic provider is ralph's gateway with the gateway's key (its SDK wants the URL with /v1), and
// turns off its fetching of the model list and its updates.
func opencodeGatewayEnv(g Gateway) []string {
	cfg, _ := json.Marshal(map[string]any{
		"provider": map[string]any{"anthropic": map[string]any{"options": map[string]string{"baseURL": g.URL + "/v1", "apiKey": g.Key}}},
		"share":    "disabled",
	})
	return []string{
		"OPENCODE_CONFIG_CONTENT=" + string(cfg),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
	}
}
