package agenttest

// A scripted OpenAI model for Codex, speaking the Responses API with streaming (POST /v1/responses,
// "stream": true, Server-Sent Events) as OpenAI's API reference describes it: response.created, then for
// each output item response.output_item.added and response.output_item.done (a "function_call" item with
// call_id, name and JSON arguments, or a "message" item with output_text content), then
// response.completed carrying the whole response with usage (input_tokens, output_tokens, total_tokens).
//
// The script: while the request's input holds no function_call_output, the model calls the CLI's tool that
// adds the artifact file: Codex's command tool (exec_command) with an apply_patch command (Codex applies
// apply_patch itself, as a file change), or opencode's write (filePath, content) or apply_patch
// (patchText); after the function_call_output it answers with a short message. A request without tools
// (opencode's side requests, such as the session's title) gets a short message and is not counted as a
// turn.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// OpenAI is the scripted Responses API model: a loopback server and what it saw.
type OpenAI struct{ script }

// NewOpenAI starts the scripted model; it stops when the test ends. With artifact "", the model asks
// to write the document at the path the prompt gives.
func NewOpenAI(t testing.TB, key, artifact, content string) *OpenAI {
	f := &OpenAI{script{key: key, artifact: artifact, content: content}}
	f.start(t, f.serve)
	return f
}

func (f *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		// Codex may ask for /v1/models; not scripted: it falls back to its built-in model metadata.
		http.Error(w, `{"error":{"message":"not scripted","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+f.key {
		f.problem("Authorization = %q, want the bearer key %q", got, f.key)
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
		Tools []struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(f.read(r), &req); err != nil {
		f.problem("undecodable request: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	tool := ""
	for _, t := range req.Tools {
		switch {
		case t.Name == "exec_command", t.Name == "write" && tool != "exec_command", t.Name == "apply_patch" && tool == "":
			tool = t.Name
		}
	}
	if tool == "" {
		// A side request, not the agent's loop.
		f.bill()
		f.respond(w, req.Model, "side", map[string]any{"type": "message", "id": "msg_side", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "ok", "annotations": []any{}}}})
		return
	}
	turn := f.turn()
	f.bill()
	var item map[string]any
	if !strings.Contains(string(req.Input), `"function_call_output"`) {
		artifact := target(f.artifact, string(req.Input))
		if artifact == "" || !strings.Contains(string(req.Input), artifact) {
			f.problem("the prompt does not name the artifact %q", artifact)
		}
		var patch strings.Builder
		patch.WriteString("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: " + artifact + "\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(f.content, "\n"), "\n") {
			patch.WriteString("+" + line)
		}
		patch.WriteString("\n*** End Patch\nEOF\n")
		args, _ := json.Marshal(map[string]any{"cmd": patch.String()})
		switch tool {
		case "write":
			args, _ = json.Marshal(map[string]any{"filePath": artifact, "content": f.content})
		case "apply_patch":
			body := strings.TrimSuffix(strings.TrimPrefix(patch.String(), "apply_patch <<'EOF'\n"), "EOF\n")
			args, _ = json.Marshal(map[string]any{"patchText": body})
		}
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", turn), "call_id": "call_1",
			"name": tool, "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", turn), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "I wrote the document.", "annotations": []any{}}}}
	}
	f.respond(w, req.Model, fmt.Sprint(turn), item)
}

// respond streams one response whose output is item, with the fixed usage.
func (f *OpenAI) respond(w http.ResponseWriter, model, id string, item map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	send := func(event string, data map[string]any) {
		data["type"] = event
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	resp := map[string]any{"id": "resp_" + id, "object": "response", "model": model,
		"status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": resp})
	send("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	resp["status"] = "completed"
	resp["output"] = []any{item}
	resp["usage"] = map[string]any{
		"input_tokens": InputTokens, "input_tokens_details": map[string]int{"cached_tokens": CachedTokens},
		"output_tokens": OutputTokens, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens": InputTokens + OutputTokens,
	}
	send("response.completed", map[string]any{"response": resp})
}
