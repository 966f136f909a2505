package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// geminiPrompt is Gemini CLI's -p argument, which it appends to the prompt read from stdin; -p is what
// makes it run headless.
const geminiPrompt = "Carry out the task above."

// geminiArgs is Gemini CLI's headless invocation (the prompt comes on stdin):
//   - -p with --output-format stream-json: one JSON event per line;
//   - --approval-mode yolo: file edits and shell commands run without asking (headless, nobody could
//     answer), and --skip-trust: the worktree is trusted for this session only, without which Gemini CLI
//     falls back to asking;
//   - --model from agent.model. Gemini CLI has no turn or cost flag: ralph enforces agent.max_turns from
//     the events (agent.max_cost cannot be: it reports tokens, not cost).
func geminiArgs(cfg config.Agent) []string {
	args := []string{"-p", geminiPrompt, "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust"}
	if cfg.Model != "" {
		args = append(args, "--model", cfg.Model)
	}
	return args
}

// seedGeminiHome gives a HOME without Gemini CLI settings (the agent's own HOME is new each step) the
// settings that choose GEMINI_API_KEY, when the agent has that key: headless, Gemini CLI otherwise refuses
// to start when its base URL is not Google's own ("Invalid auth method selected"). Settings the agent's
// HOME already has are left alone.
func seedGeminiHome(inv Invocation) error {
	var home string
	hasKey := false
	for _, kv := range inv.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME":
			home = v
		case "GEMINI_API_KEY":
			hasKey = v != ""
		}
	}
	if home == "" || !hasKey {
		return nil
	}
	dir := filepath.Join(home, ".gemini")
	path := filepath.Join(dir, "settings.json")
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("preparing Gemini CLI's settings: %w", err)
	}
	if err := os.WriteFile(path, []byte(geminiSettings), 0o600); err != nil {
		return fmt.Errorf("preparing Gemini CLI's settings: %w", err)
	}
	if inv.Boundary != nil {
		if uid, gid, ok := inv.Boundary.Agent(); ok {
			for _, p := range []string{dir, path} {
				if err := os.Lchown(p, uid, gid); err != nil {
					return fmt.Errorf("preparing Gemini CLI's settings: %w", err)
				}
			}
		}
	}
	return nil
}

// geminiParser reads Gemini CLI's stream-json: init (the model), messages (the assistant's in pieces),
// tool_use and tool_result, errors, and a result with token stats. A turn is one model response: the
// assistant's text or tool calls up to the tool results that answer them.
type geminiParser struct {
	model  string
	u      Usage
	inTurn bool
	text   strings.Builder // the assistant's message so far, shown whole
}

type geminiEvent struct {
	Type       string          `json:"type"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Message    string          `json:"message"`
	Error      struct {
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"stats"`
}

func (p *geminiParser) event(line []byte) []string {
	var ev geminiEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	if ev.Type == "message" && ev.Role == "assistant" {
		p.turn()
		p.text.WriteString(ev.Content)
		return nil
	}
	out := p.flush()
	switch ev.Type {
	case "init":
		if ev.Model != "" {
			p.u.Model = ev.Model
		}
		out = append(out, "gemini: started ("+p.usage().Model+")")
	case "tool_use":
		p.turn()
		out = append(out, describeTool(ev.ToolName, ev.Parameters))
	case "tool_result":
		p.inTurn = false
		if ev.Status == "error" {
			out = append(out, "  ✗ "+oneLine(ev.Error.Message, 200))
		}
	case "error":
		out = append(out, "gemini: "+oneLine(ev.Message, 200))
	case "result":
		p.u.InputTokens = ev.Stats.InputTokens
		p.u.OutputTokens = ev.Stats.OutputTokens
		line := "gemini: " + ev.Status
		if ev.Error.Message != "" {
			line += ": " + oneLine(ev.Error.Message, 200)
		}
		out = append(out, line)
	}
	return out
}

func (p *geminiParser) turn() {
	if !p.inTurn {
		p.inTurn = true
		p.u.Turns++
	}
}

func (p *geminiParser) flush() []string {
	t := oneLine(p.text.String(), 200)
	p.text.Reset()
	if t == "" {
		return nil
	}
	return []string{"» " + t}
}

func (p *geminiParser) usage() Usage {
	u := p.u
	if u.Model == "" {
		u.Model = p.model
	}
	return u
}
