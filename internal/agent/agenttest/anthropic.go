// Package agenttest holds scripted model servers that speak an agent CLI's vendor API on loopback, so that
// tests can run the real CLIs through ralph's presets without a model.
//
// Anthropic speaks the Messages API with streaming (POST /v1/messages, "stream": true, Server-Sent Events)
// as Anthropic's API reference describes it: message_start (with usage.input_tokens), content_block_start /
// content_block_delta / content_block_stop for each block (text_delta for text, input_json_delta for a
// tool_use block's input), message_delta (stop_reason and usage.output_tokens), message_stop.
//
// The script: when the conversation's last user message carries no tool_result, the model answers with a
// tool_use of the CLI's file-writing tool (Claude Code's Write, Copilot CLI's create, opencode's and pi's write), asking it to write the artifact; after the tool_result it
// answers with a short text and end_turn. Requests without tools (Claude Code's side requests, such as
// titles) get a short text and are not counted as turns.
package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Fixed usage the scripted models report per answer; tests check ralph records exactly these. Of the input
// tokens, CachedTokens were read from the vendor's prompt cache (each API says so its own way).
const (
	InputTokens  = 1000
	CachedTokens = 200
	OutputTokens = 50
)

// Anthropic is the scripted model: a loopback server and what it saw.
type Anthropic struct{ script }

// NewAnthropic starts the scripted model; it stops when the test ends. With artifact "", the model asks
// to write the document at the path the prompt gives (the indented absolute path of ralph's templates).
func NewAnthropic(t testing.TB, key, artifact, content string) *Anthropic {
	f := &Anthropic{script{key: key, artifact: artifact, content: content}}
	f.start(t, f.serve)
	return f
}

// NewAnthropicSteps starts a scripted model whose every agent step writes what write says, given the
// request's messages and system prompt as JSON (path "": the model asks for nothing and records a problem);
// it is how one model serves a whole flow (research, plan, review, an implement phase).
func NewAnthropicSteps(t testing.TB, key string, write func(request string) (path, content string)) *Anthropic {
	f := &Anthropic{script{key: key}}
	f.write = write
	f.start(t, f.serve)
	return f
}

// target is the document to write: the one given, or the one the prompt in request names.
func target(artifact, request string) string {
	if artifact != "" {
		return artifact
	}
	if m := promptPath.FindStringSubmatch(request); m != nil {
		return m[1]
	}
	return ""
}

// promptPath finds the document's path in ralph's prompt, as the request's JSON carries it: an absolute
// path alone on an indented line.
var promptPath = regexp.MustCompile(`\\n {4}(/[^\\"]+\.md)\\n`)

type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or a list of blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"messages"`
	Tools []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"input_schema"`
	} `json:"tools"`
}

func (f *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		// Claude Code may probe other endpoints (token counting, account checks); none is part of the script.
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`, http.StatusNotFound)
		return
	}
	got := r.Header.Get("X-Api-Key")
	if got == "" {
		got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") // an OAuth token
	}
	if got != f.key {
		f.problem("key = %q, want %q", got, f.key)
	}
	var req anthropicRequest
	if err := json.Unmarshal(f.read(r), &req); err != nil {
		f.problem("undecodable request: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	// The file-writing tool: Claude Code's Write (file_path, content), Copilot CLI's create (path,
	// file_text), opencode's write (filePath, content) or pi's write (path, content).
	tool, pathField, textField := "", "", ""
	for _, t := range req.Tools {
		switch t.Name {
		case "Write":
			tool, pathField, textField = t.Name, "file_path", "content"
		case "create":
			tool, pathField, textField = t.Name, "path", "file_text"
		case "write":
			tool, pathField, textField = t.Name, "filePath", "content"
			if _, ok := t.InputSchema.Properties["filePath"]; !ok {
				pathField = "path"
			}
		}
	}
	if tool == "" {
		// A side request, not the agent's loop.
		f.respond(w, req, "msg_side", "", nil, "ok", "end_turn")
		return
	}
	last := req.Messages[len(req.Messages)-1]
	all, _ := json.Marshal(req.Messages)
	id := fmt.Sprintf("msg_%02d", f.turn())
	if !strings.Contains(string(last.Content), `"tool_result"`) {
		artifact, content := target(f.artifact, string(all)), f.content
		if f.write != nil {
			artifact, content = f.write(string(all) + "\n" + string(req.System))
			if artifact == "" {
				f.problem("the step's request is not one the script knows: %s", all)
			}
		} else if artifact == "" || !strings.Contains(string(all), artifact) {
			f.problem("the prompt does not name the artifact %q", artifact)
		}
		input := map[string]string{pathField: artifact, textField: content}
		f.respond(w, req, id, tool, input, "", "tool_use")
		return
	}
	if strings.Contains(string(last.Content), `"is_error":true`) {
		f.problem("the tool failed: %s", last.Content)
	}
	f.respond(w, req, id, "", nil, "I wrote the document.", "end_turn")
}

// respond streams one assistant message: a tool_use block when tool is set, else a text block.
func (f *Anthropic) respond(w http.ResponseWriter, req anthropicRequest, id, tool string, input any, text, stop string) {
	f.bill()
	// Anthropic's input_tokens counts only what no cache served.
	usage := map[string]int{"input_tokens": InputTokens - CachedTokens, "cache_read_input_tokens": CachedTokens, "cache_creation_input_tokens": 0}
	if !req.Stream {
		// Claude Code streams its agent turns; answer anything else in the plain JSON form.
		block := map[string]any{"type": "text", "text": text}
		if tool != "" {
			block = map[string]any{"type": "tool_use", "id": "toolu_01", "name": tool, "input": input}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": usage["input_tokens"], "cache_read_input_tokens": CachedTokens, "output_tokens": OutputTokens},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": usage["input_tokens"], "cache_read_input_tokens": CachedTokens, "cache_creation_input_tokens": 0, "output_tokens": 1},
	}})
	if tool != "" {
		args, _ := json.Marshal(input)
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_01", "name": tool, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}})
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": OutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
