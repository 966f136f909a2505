package preset

func gemini() Preset {
	return Preset{
		Name:    "gemini",
		Title:   "the Gemini CLI",
		Program: "gemini",
		Package: "@google/gemini-cli",
		Version: "0.61.0",
		Vendor:  "gemini",
		KeyVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		Args:    geminiArgs,
		Stream:  GeminiStreamJSON,
		// Its project settings, commands and extensions (MCP servers, tool discovery commands).
		ConfigPaths: []string{".gemini/**"},
		// With GOOGLE_GEMINI_BASE_URL set Gemini CLI takes the auth type to be "gateway", which headless
		// mode refuses ("Invalid auth method selected"), unless its user settings pick the API key.
		Home: []File{{Path: ".gemini/settings.json", Content: `{"security":{"auth":{"selectedType":"gemini-api-key"}}}` + "\n"}},
	}
}

// GeminiPrompt is Gemini CLI's -p argument, which it appends to the prompt read from stdin; -p is what
// makes it run headless.
const GeminiPrompt = "Carry out the task above."

// geminiArgs is Gemini CLI's headless invocation (the prompt comes on stdin):
//   - -p with --output-format stream-json: one JSON event per line;
//   - --approval-mode yolo: file edits and shell commands run without asking (headless, nobody could
//     answer), and --skip-trust: the worktree is trusted for this session only, without which Gemini CLI
//     falls back to asking;
//   - --model from agent.model. Gemini CLI has no turn or cost flag: ralph enforces agent.max_turns from
//     the events (agent.max_cost cannot be: it reports tokens, not cost).
func geminiArgs(s Settings) []string {
	args := []string{"-p", GeminiPrompt, "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust"}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	return args
}
