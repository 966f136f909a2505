package agent

import (
	"encoding/json"
	"fmt"
)

// piParser reads pi's --mode json: a session header, then its agent's events: turn_start for each model
// turn, message_end for each message (an assistant's with its text, model, stop reason, tokens and cost,
// which pi prices from its own table), tool_execution_start and _end, and auto_retry_start.
type piParser struct {
	model   string
	u       Usage
	started bool
}

type piEvent struct {
	Type    string `json:"type"`
	Message struct {
		Role     string `json:"role"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
		Content  []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
		Usage        struct {
			Input      int `json:"input"`
			Output     int `json:"output"`
			CacheRead  int `json:"cacheRead"`
			CacheWrite int `json:"cacheWrite"`
			Cost       struct {
				Total float64 `json:"total"`
			} `json:"cost"`
		} `json:"usage"`
	} `json:"message"`
	ToolName     string          `json:"toolName"`
	Args         json.RawMessage `json:"args"`
	IsError      bool            `json:"isError"`
	Result       json.RawMessage `json:"result"`
	Attempt      int             `json:"attempt"`
	MaxAttempts  int             `json:"maxAttempts"`
	ErrorMessage string          `json:"errorMessage"`
}

func (p *piParser) event(line []byte) []string {
	var ev piEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	var out []string
	switch ev.Type {
	case "turn_start":
		p.u.Turns++
	case "message_start":
		if m := ev.Message; m.Role == "assistant" && !p.started {
			p.started = true
			if m.Model != "" {
				p.u.Model = m.Model
				if m.Provider != "" {
					p.u.Model = m.Provider + "/" + m.Model
				}
			}
			out = append(out, "pi: started ("+p.usage().Model+")")
		}
	case "message_end":
		m := ev.Message
		if m.Role != "assistant" {
			break
		}
		// pi's input counts what no cache served; ralph's counts every prompt token.
		p.u.InputTokens += m.Usage.Input + m.Usage.CacheRead + m.Usage.CacheWrite
		p.u.CacheReadTokens += m.Usage.CacheRead
		p.u.CacheWriteTokens += m.Usage.CacheWrite
		p.u.OutputTokens += m.Usage.Output
		p.u.CostUSD += m.Usage.Cost.Total
		for _, c := range m.Content {
			if t := oneLine(c.Text, 200); c.Type == "text" && t != "" {
				out = append(out, "» "+t)
			}
		}
		if m.StopReason == "error" || m.StopReason == "aborted" {
			out = append(out, "pi: "+m.StopReason+": "+oneLine(m.ErrorMessage, 200))
		}
	case "tool_execution_start":
		out = append(out, describeTool(ev.ToolName, ev.Args))
	case "tool_execution_end":
		if ev.IsError {
			out = append(out, "  ✗ "+oneLine(piResultText(ev.Result), 200))
		}
	case "auto_retry_start":
		out = append(out, fmt.Sprintf("pi: retrying (%d of %d): %s", ev.Attempt, ev.MaxAttempts, oneLine(ev.ErrorMessage, 200)))
	}
	return out
}

// piResultText is the text of a tool's result: {"content":[{"type":"text","text":…}]}.
func piResultText(raw json.RawMessage) string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Content == nil {
		return string(raw)
	}
	return textOf(r.Content)
}

func (p *piParser) usage() Usage {
	u := p.u
	if u.Model == "" {
		u.Model = p.model
	}
	return u
}
