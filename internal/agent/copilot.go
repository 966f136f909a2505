package agent

import (
	"encoding/json"
	"fmt"
)

// copilotParser reads Copilot CLI's --output-format json: session events, assistant.turn_start for each
// model turn, model.call_start (the model), assistant.message (its text and tool requests),
// tool.execution_start and _complete, model.call_failure, and a final result with its exit code. It reports
// premium requests, not tokens or dollars: with ralph's gateway, the gateway meters those.
type copilotParser struct {
	model   string
	u       Usage
	started bool
}

type copilotEvent struct {
	Type     string `json:"type"`
	ExitCode int    `json:"exitCode"`
	Data     struct {
		Model        string          `json:"model"`
		Content      string          `json:"content"`
		ToolName     string          `json:"toolName"`
		Arguments    json.RawMessage `json:"arguments"`
		Success      *bool           `json:"success"`
		ErrorMessage string          `json:"errorMessage"`
		Message      string          `json:"message"`
		Error        struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"data"`
	Usage struct {
		PremiumRequests float64 `json:"premiumRequests"`
	} `json:"usage"`
}

func (p *copilotParser) event(line []byte) []string {
	var ev copilotEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil
	}
	var out []string
	switch ev.Type {
	case "model.call_start":
		if ev.Data.Model != "" {
			p.u.Model = ev.Data.Model
		}
		if !p.started {
			p.started = true
			out = append(out, "copilot: started ("+p.usage().Model+")")
		}
	case "assistant.turn_start":
		p.u.Turns++
	case "assistant.message":
		if t := oneLine(ev.Data.Content, 200); t != "" {
			out = append(out, "» "+t)
		}
	case "tool.execution_start":
		out = append(out, describeTool(ev.Data.ToolName, ev.Data.Arguments))
	case "tool.execution_complete":
		if ev.Data.Success != nil && !*ev.Data.Success {
			out = append(out, "  ✗ "+oneLine(ev.Data.Error.Message, 200))
		}
	case "model.call_failure":
		out = append(out, "copilot: model call failed: "+oneLine(ev.Data.ErrorMessage, 200))
	case "session.error":
		out = append(out, "copilot: "+oneLine(ev.Data.Message, 200))
	case "result":
		out = append(out, fmt.Sprintf("copilot: exit %d (premium requests: %g)", ev.ExitCode, ev.Usage.PremiumRequests))
	}
	return out
}

func (p *copilotParser) usage() Usage {
	u := p.u
	if u.Model == "" {
		u.Model = p.model
	}
	return u
}
