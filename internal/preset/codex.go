package preset

import "fmt"

func codex() Preset {
	return Preset{
		Name:        "codex",
		Title:       "Codex",
		Program:     "codex",
		Package:     "@openai/codex",
		Version:     "0.169.0",
		Vendor:      "openai",
		KeyVars:     []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Args:        codexArgs,
		GatewayArgs: codexGatewayArgs,
		Stream:      CodexJSONL,
		// Its project config (.codex/config.toml: MCP servers, profiles, sandbox settings).
		ConfigPaths: []string{".codex/**"},
		InBoundary:  codexInBoundary,
	}
}

// codexArgs is Codex's non-interactive invocation, `codex exec` (the prompt comes on stdin):
//   - --json: one JSON event per line;
//   - --sandbox workspace-write: commands may write in the working directory (and temporary
//     directories) and nowhere else, with no network; exec never stops to ask for an approval;
//   - --skip-git-repo-check and --ephemeral: no trust prompt for the worktree, no session files kept;
//   - --model from agent.model. Codex has no turn or cost limit of its own: ralph enforces agent.max_turns
//     from the events (agent.max_cost cannot be: Codex reports tokens, not cost).
func codexArgs(s Settings) []string {
	args := []string{"exec", "--json", "--color", "never", "--sandbox", "workspace-write",
		"--skip-git-repo-check", "--ephemeral"}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	return args
}

// codexGatewayArgs: Codex takes no base URL from its environment for its own provider: it gets a provider
// of ralph's, on the command line (which holds the URL, not the key: the key is read from the gateway's
// key variable). Codex also offers its model OpenAI's web search tool on every request, which the gateway
// refuses unless gateway.server_tools allows it: then Codex is told not to.
func codexGatewayArgs(g Gateway) []string {
	provider := fmt.Sprintf(`model_providers.ralph={name="ralph", base_url="%s/v1", env_key="%s", wire_api="responses"}`, g.URL, g.KeyVar)
	args := []string{"-c", provider, "-c", "model_provider=ralph"}
	if !g.WebSearch {
		args = append(args, "-c", `web_search="disabled"`)
	}
	return args
}

// codexInBoundary is argv with Codex's own sandbox off (danger-full-access) when ralph's boundary holds
// the agent: Codex builds its sandbox with namespaces and mounts, which Landlock forbids a confined process
// (and Docker's default seccomp profile forbids in the Action's container), so every write of Codex's would
// fail there. ralph's boundary confines its writes to its copy, HOME and TMPDIR instead; unlike Codex's
// workspace-write, it leaves the network open.
func codexInBoundary(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "--sandbox" && out[i+1] == "workspace-write" {
			out[i+1] = "danger-full-access"
		}
	}
	return out
}
