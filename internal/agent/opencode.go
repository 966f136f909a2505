package agent

import (
	"encoding/json"
)

// opencodeParser reads `opencode run --format json`: step_start for each model turn, tool_use (a tool call
// with its input and how it ended), text (the assistant's), step_finish (the step's tokens), and error.
type opencodeParser struct {
	model   string
	u       Usage
	started bool
}

type opencodeEvent struct {
	Type string `json:"type"`
	Part struct {
		Tool  string `json:"tool"`
		Text  string `json:"text"`
		State struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Error  string          `json:"error"`
		} `json:"state"`
		Tokens struct {
			Input  int `json:"input"`
			Output int `json:"output"`
			Cache  struct {
				Read  int `json:"read"`
				Write int `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
	Error struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

func (p *opencodeParser) event(line []byte) []string {
	var ev opencodeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	var out []string
	switch ev.Type {
	case "step_start":
		if !p.started {
			p.started = true
			out = append(out, "opencode: started ("+p.usage().Model+")")
		}
		p.u.Turns++
	case "tool_use":
		out = append(out, describeTool(ev.Part.Tool, ev.Part.State.Input))
		if ev.Part.State.Status == "error" {
			out = append(out, "  ✗ "+oneLine(ev.Part.State.Error, 200))
		}
	case "text":
		if t := oneLine(ev.Part.Text, 200); t != "" {
			out = append(out, "» "+t)
		}
	case "step_finish":
		// opencode's input counts what no cache served; ralph's counts every prompt token.
		p.u.InputTokens += ev.Part.Tokens.Input + ev.Part.Tokens.Cache.Read + ev.Part.Tokens.Cache.Write
		p.u.CacheReadTokens += ev.Part.Tokens.Cache.Read
		p.u.CacheWriteTokens += ev.Part.Tokens.Cache.Write
		p.u.OutputTokens += ev.Part.Tokens.Output
	case "error":
		msg := ev.Error.Data.Message
		if msg == "" {
			msg = ev.Error.Name
		}
		out = append(out, "opencode: "+oneLine(msg, 200))
	}
	return out
}

func (p *opencodeParser) usage() Usage {
	u := p.u
	if u.Model == "" {
		u.Model = p.model
	}
	return u
}
