package agent

import (
	"encoding/json"
	"strings"
)

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
