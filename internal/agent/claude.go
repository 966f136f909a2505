package agent

import (
	"encoding/json"
	"strings"
)

// claudeParser reads Claude Code's stream-json: a system/init event (the model), assistant and user
// messages (tool calls and their results), and a final result event with usage, cost and how it ended.
type claudeParser struct {
	u        Usage
	messages map[string]bool // assistant message ids seen: one per model turn
	result   bool
}

type claudeEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Model   string `json:"model"`
	Message struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			IsError bool            `json:"is_error"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
	} `json:"message"`
	// result
	NumTurns     int     `json:"num_turns"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	Usage        struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	} `json:"usage"`
	Errors []string `json:"errors"`
}

func (p *claudeParser) event(line []byte) []string {
	var ev claudeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	var out []string
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			p.u.Model = ev.Model
			out = append(out, "claude: started ("+ev.Model+")")
		}
	case "assistant":
		if ev.Message.ID != "" {
			if p.messages == nil {
				p.messages = map[string]bool{}
			}
			if !p.messages[ev.Message.ID] {
				p.messages[ev.Message.ID] = true
				if !p.result {
					p.u.Turns = len(p.messages)
				}
			}
		}
		for _, c := range ev.Message.Content {
			switch c.Type {
			case "text":
				if t := oneLine(c.Text, 200); t != "" {
					out = append(out, "» "+t)
				}
			case "tool_use":
				out = append(out, describeTool(c.Name, c.Input))
			}
		}
	case "user":
		for _, c := range ev.Message.Content {
			if c.Type == "tool_result" && c.IsError {
				out = append(out, "  ✗ "+oneLine(textOf(c.Content), 200))
			}
		}
	case "result":
		p.result = true
		u := ev.Usage
		p.u.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		p.u.OutputTokens = u.OutputTokens
		p.u.CostUSD = ev.TotalCostUSD
		if p.u.Turns == 0 {
			p.u.Turns = ev.NumTurns
		}
		switch ev.Subtype {
		case "error_max_turns":
			p.u.HitTurnLimit = true
		case "error_max_budget_usd":
			p.u.OverBudget = true
		}
		line := "claude: " + strings.TrimPrefix(ev.Subtype, "error_")
		if len(ev.Errors) > 0 {
			line += ": " + oneLine(strings.Join(ev.Errors, "; "), 200)
		}
		out = append(out, line)
	}
	return out
}

func (p *claudeParser) usage() Usage { return p.u }

// describeTool is one progress line for a tool call of any of the CLIs: the file it edits, the command
// it runs, or its name.
func describeTool(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	switch strings.ToLower(name) {
	case "write", "edit", "multiedit", "notebookedit", "write_file", "replace", "edit_file":
		return "✎ " + name + " " + str("file_path", "path", "notebook_path")
	case "bash", "run_shell_command", "shell", "exec_command":
		return "$ " + oneLine(str("command", "cmd"), 200)
	case "read", "read_file", "glob", "grep", "list_directory", "ls", "search_file_content", "read_many_files":
		if s := str("file_path", "path", "pattern", "dir_path"); s != "" {
			return "· " + name + " " + oneLine(s, 200)
		}
	}
	return "· " + name
}

// textOf is the text of a tool result: a string, or a list of text blocks.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
