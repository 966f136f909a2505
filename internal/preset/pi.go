package preset

import (
	"encoding/json"
	"strings"
)

func pi() Preset {
	return Preset{
		Name:    "pi",
		Title:   "pi",
		Program: "pi",
		Package: "@mariozechner/pi-coding-agent",
		Version: "0.73.1",
		// Through ralph's gateway pi's built-in anthropic provider is the one it reaches.
		Vendor:      "anthropic",
		KeyVars:     []string{"ANTHROPIC_API_KEY"},
		Args:        piArgs,
		GatewayEnv:  piGatewayEnv,
		GatewayHome: piGatewayHome,
		Stream:      PiJSONL,
		ReportsCost: true,
		// Its project settings (which may name packages for it to install), system prompt, extensions
		// (code it runs), skills, prompt templates and themes, and the skills it shares with other agents.
		ConfigPaths: []string{".pi/**", ".agents/skills/**"},
	}
}

// PiModel is the model pi asks ralph's gateway for when agent.model is not set.
const PiModel = "anthropic/claude-sonnet-4-5"

// piArgs is pi's non-interactive invocation (the prompt comes on stdin):
//   - -p with --mode json: one JSON event per line;
//   - --no-session: nothing is left in its HOME to resume;
//   - --offline: none of its startup network operations (update checks, installing the packages its
//     settings name, telemetry);
//   - --model from agent.model, as pi names models (provider/model; a bare model is Anthropic's). pi has
//     no turn or cost flag: ralph enforces agent.max_turns from the events, and agent.max_cost from the
//     cost it reports, or through its gateway. Its tools are its defaults (read, bash, edit, write), which
//     it runs without asking.
func piArgs(s Settings) []string {
	model := s.Model
	switch {
	case model == "":
		model = PiModel
	case !strings.Contains(model, "/"):
		model = "anthropic/" + model
	}
	return []string{"-p", "--mode", "json", "--no-session", "--offline", "--model", model}
}

// piGatewayEnv empties the variable pi prefers to the API key (an Anthropic OAuth token) and the one that
// would move its agent directory away from the models.json ralph writes, and turns off its telemetry.
func piGatewayEnv(Gateway) []string {
	return []string{"ANTHROPIC_OAUTH_TOKEN=", "PI_OFFLINE=1", "PI_TELEMETRY=0", "PI_CODING_AGENT_DIR="}
}

// piGatewayHome points pi's built-in anthropic provider at ralph's gateway: pi reads no base URL from its
// environment, only from models.json in its agent directory (~/.pi/agent). The key stays where ralph puts
// it, ANTHROPIC_API_KEY, which the provider reads.
func piGatewayHome(g Gateway) []File {
	b, _ := json.Marshal(map[string]any{"providers": map[string]any{"anthropic": map[string]string{"baseUrl": g.URL}}})
	return []File{{Path: ".pi/agent/models.json", Content: string(b) + "\n"}}
}
