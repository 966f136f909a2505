package agent

// A scripted Anthropic model for Claude Code, speaking the Messages API with streaming
// (POST /v1/messages, "stream": true, Server-Sent Events) as Anthropic's API reference describes it:
// message_start (with usage.input_tokens), content_block_start / content_block_delta / content_block_stop
// for each block (text_delta for text, input_json_delta for a tool_use block's input), message_delta
// (stop_reason and usage.output_tokens), message_stop.
//
// The script: when the conversation's last user message carries no tool_result, the model answers with a
// tool_use of Claude Code's file-writing tool, asking it to write the artifact; after the tool_result it
// answers with a short text and end_turn. Requests without tools (Claude Code's side requests, such as
// titles) get a short text and are not counted as turns.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Fixed usage the scripted models report per turn; the tests check ralph records exactly these.
const (
	fakeInputTokens  = 1000
	fakeOutputTokens = 50
)

type fakeAnthropic struct {
	t        *testing.T
	key      string // the API key the CLI must send (x-api-key)
	artifact string // the absolute path the model asks to write; must appear in the prompt
	content  string // what it writes
	mu       sync.Mutex
	turns    int      // agent turns answered (requests with tools)
	problems []string // requests the script did not expect
}

func newFakeAnthropic(t *testing.T, key, artifact, content string) (*fakeAnthropic, *httptest.Server) {
	f := &fakeAnthropic{t: t, key: key, artifact: artifact, content: content}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAnthropic) problem(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (f *fakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		// Claude Code may probe other endpoints (token counting, account checks); none is part of the script.
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("X-Api-Key"); got != f.key {
		f.problem("x-api-key = %q, want %q", got, f.key)
	}
	var req anthropicRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.problem("undecodable request: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	tool := ""
	for _, t := range req.Tools {
		if t.Name == "Write" {
			tool = t.Name
		}
	}
	if tool == "" {
		// A side request, not the agent's loop.
		f.respond(w, req, "msg_side", "", nil, "ok", "end_turn")
		return
	}
	last := req.Messages[len(req.Messages)-1]
	all, _ := json.Marshal(req.Messages)
	f.mu.Lock()
	f.turns++
	id := fmt.Sprintf("msg_%02d", f.turns)
	f.mu.Unlock()
	if !strings.Contains(string(last.Content), `"tool_result"`) {
		if !strings.Contains(string(all), f.artifact) {
			f.problem("the prompt does not name the artifact %s", f.artifact)
		}
		input := map[string]string{"file_path": f.artifact, "content": f.content}
		f.respond(w, req, id, tool, input, "", "tool_use")
		return
	}
	if strings.Contains(string(last.Content), `"is_error":true`) {
		f.problem("the tool failed: %s", last.Content)
	}
	f.respond(w, req, id, "", nil, "I wrote the document.", "end_turn")
}

// respond streams one assistant message: a tool_use block when tool is set, else a text block.
func (f *fakeAnthropic) respond(w http.ResponseWriter, req anthropicRequest, id, tool string, input any, text, stop string) {
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
			"usage": map[string]int{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens},
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
		"usage": map[string]int{"input_tokens": fakeInputTokens, "output_tokens": 1},
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
		"usage": map[string]int{"output_tokens": fakeOutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
