package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// codexParser reads `codex exec --json`: thread and turn events, items (agent messages, commands run,
// file changes, tool calls) as they start and complete, and turn.completed with the turn's token usage.
// Codex reports no count of model requests, so a turn here is one action or message it reports.
type codexParser struct {
	model string
	u     Usage
	items map[string]bool
}

type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Item struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Text     string `json:"text"`
		Message  string `json:"message"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		Query    string `json:"query"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

func (p *codexParser) event(line []byte) []string {
	var ev codexEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	if p.u.Model == "" {
		p.u.Model = p.model
	}
	it := ev.Item
	switch ev.Type {
	case "turn.completed":
		p.u.InputTokens += ev.Usage.InputTokens
		p.u.OutputTokens += ev.Usage.OutputTokens
		return nil
	case "turn.failed":
		return []string{"codex: turn failed: " + oneLine(ev.Error.Message, 200)}
	case "error":
		return []string{"codex: " + oneLine(ev.Message, 200)}
	case "item.started", "item.completed":
	default:
		return nil
	}
	switch it.Type {
	case "agent_message", "command_execution", "file_change", "mcp_tool_call", "web_search":
		if p.items == nil {
			p.items = map[string]bool{}
		}
		first := !p.items[it.ID]
		p.items[it.ID] = true
		p.u.Turns = len(p.items)
		if !first && ev.Type == "item.completed" {
			// Shown when it started; only a failure is worth another line.
			if it.Type == "command_execution" && it.ExitCode != nil && *it.ExitCode != 0 {
				return []string{fmt.Sprintf("  ✗ exit %d", *it.ExitCode)}
			}
			if it.Status == "failed" {
				return []string{"  ✗ failed"}
			}
			return nil
		}
	}
	switch it.Type {
	case "agent_message":
		if t := oneLine(it.Text, 200); t != "" {
			return []string{"» " + t}
		}
	case "command_execution":
		return []string{"$ " + oneLine(it.Command, 200)}
	case "file_change":
		var out []string
		for _, c := range it.Changes {
			out = append(out, "✎ "+c.Kind+" "+c.Path)
		}
		return out
	case "mcp_tool_call":
		return []string{"· " + strings.Trim(it.Server+"/"+it.Tool, "/")}
	case "web_search":
		return []string{"· search " + oneLine(it.Query, 200)}
	case "error":
		return []string{"codex: " + oneLine(it.Message, 200)}
	}
	return nil
}

func (p *codexParser) usage() Usage {
	u := p.u
	if u.Model == "" {
		u.Model = p.model
	}
	return u
}
