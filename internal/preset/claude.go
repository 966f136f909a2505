package preset

import (
	"fmt"
	"strconv"
)

func claude() Preset {
	return Preset{
		Name:        "claude",
		Title:       "Claude Code",
		Program:     "claude",
		Package:     "@anthropic-ai/claude-code",
		Version:     "2.1.330",
		Vendor:      "anthropic",
		KeyVars:     []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
		Args:        claudeArgs,
		Stream:      ClaudeStreamJSON,
		ReportsCost: true,
		// Its settings, hooks, agents, commands and skills, and its project MCP servers.
		ConfigPaths: []string{".claude/**", ".mcp.json"},
	}
}

// claudeArgs is Claude Code's non-interactive invocation (the prompt comes on stdin):
//   - -p with --output-format stream-json (which needs --verbose): one JSON event per line;
//   - --permission-mode acceptEdits with --allowedTools Bash: file edits in the working directory and
//     commands run without asking, which is what a step needs. --dangerously-skip-permissions would
//     do more and is refused as root, which is how the Action's container runs;
//   - --no-session-persistence: nothing is left in ~/.claude to resume;
//   - --model, --max-turns and --max-budget-usd from agent.model, agent.max_turns and agent.max_cost.
func claudeArgs(s Settings) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--no-session-persistence"}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	if s.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(s.MaxTurns))
	}
	if s.MaxCost > 0 {
		args = append(args, "--max-budget-usd", fmt.Sprintf("%.2f", s.MaxCost))
	}
	return args
}
