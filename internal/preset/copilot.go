package preset

func copilot() Preset {
	return Preset{
		Name:    "copilot",
		Title:   "GitHub Copilot CLI",
		Program: "copilot",
		Package: "@github/copilot",
		Version: "1.0.102",
		// Its bring-your-own-key mode, pointed at ralph's gateway, speaks Anthropic's Messages API (its
		// provider types are openai, azure and anthropic; ralph's OpenAI gateway serves the Responses API,
		// not the chat completions Copilot CLI's openai type sends).
		Vendor:     "anthropic",
		KeyVars:    []string{"ANTHROPIC_API_KEY", "COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN"},
		Args:       copilotArgs,
		PromptArg:  "-p",
		GatewayEnv: copilotGatewayEnv,
		Stream:     CopilotJSONL,
		// Its repository instructions, custom agents, skills, hooks (commands it runs) and MCP servers.
		ConfigPaths: []string{
			".github/copilot-instructions.md", ".github/instructions/**", ".github/agents/**",
			".github/skills/**", ".github/hooks/**", ".github/mcp.json", ".mcp.json", ".vscode/mcp.json", ".copilot/**",
		},
		WithoutGateway: "with gateway.enabled: false, Copilot CLI runs on a Copilot plan: the agent holds the GitHub token agent.env passes it " +
			"(COPILOT_GITHUB_TOKEN, a fine-grained token with the Copilot Requests permission), which ralph cannot proxy (Copilot's API " +
			"trades it for tokens of its own), and can use it for as long as it is valid; what bounds its spending is the plan's premium " +
			"requests, not dollars (agent.max_cost cannot be enforced)",
	}
}

// CopilotModel is the model Copilot CLI asks ralph's gateway for when agent.model is not set.
const CopilotModel = "claude-sonnet-4-5"

// copilotArgs is Copilot CLI's non-interactive invocation. It takes its prompt from -p only (a prompt on
// stdin with -p is ignored, and stdin alone is not read headless), so the prompt is -p's argument:
//   - --output-format json: one JSON event per line;
//   - --allow-all-tools: tools run without asking (required headless); its file tools stay in the
//     working directory (and the temporary directory), as --allow-all-paths is not given;
//   - --no-color, --disable-client-telemetry, --no-auto-update: plain output, nothing sent to GitHub
//     that is not the task, no update fetched mid-step;
//   - --model from agent.model. Copilot CLI has no turn or cost flag: ralph enforces agent.max_turns from
//     the events, and agent.max_cost through its gateway.
func copilotArgs(s Settings) []string {
	args := []string{"--output-format", "json", "--allow-all-tools", "--no-color", "--disable-client-telemetry", "--no-auto-update"}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	return args
}

// copilotGatewayEnv points Copilot CLI's bring-your-own-key provider at ralph's gateway, with the
// gateway's key: it then needs no GitHub token and reaches no GitHub model. COPILOT_OFFLINE turns off the
// rest of its network (GitHub sign-in, telemetry, its web tools, GitHub's MCP server, updates); the
// variables that would replace the key or add headers are emptied.
func copilotGatewayEnv(g Gateway) []string {
	model := g.Model
	if model == "" {
		model = CopilotModel
	}
	return []string{
		"COPILOT_PROVIDER_BASE_URL=" + g.URL,
		"COPILOT_PROVIDER_TYPE=anthropic",
		"COPILOT_PROVIDER_API_KEY=" + g.Key,
		"COPILOT_MODEL=" + model,
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_API_KEY_COMMAND=",
		"COPILOT_PROVIDER_BEARER_TOKEN=",
		"COPILOT_PROVIDER_HEADERS=",
		"COPILOT_GITHUB_TOKEN=",
	}
}
