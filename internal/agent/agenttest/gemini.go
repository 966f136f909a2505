package agenttest

// A scripted Gemini model for Gemini CLI, speaking the Gemini API as Google's API reference describes it:
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse answers with Server-Sent Events whose data are
// GenerateContentResponse objects ({"candidates":[{"content":{"role":"model","parts":[…]},
// "finishReason":"STOP"}],"usageMetadata":{"promptTokenCount","candidatesTokenCount","totalTokenCount"}});
// POST …:generateContent answers with one such object, and …:countTokens with {"totalTokens": n}.
// A tool call is a part {"functionCall":{"name","args"}}; its result comes back as a part
// {"functionResponse":{"name","response"}}.
//
// The script: while the last content holds no functionResponse, the model calls Gemini CLI's file tool
// (write_file) for the artifact; after the functionResponse it answers with a short text. Requests without
// that tool (the CLI's own side requests) get a short text and are not counted as turns.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Gemini is the scripted Gemini API model: a loopback server and what it saw.
type Gemini struct{ script }

// NewGemini starts the scripted model; it stops when the test ends. With artifact "", the model asks
// to write the document at the path the prompt gives.
func NewGemini(t testing.TB, key, artifact, content string) *Gemini {
	f := &Gemini{script{key: key, artifact: artifact, content: content}}
	f.start(t, f.serve)
	return f
}

func (f *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	model, method, ok := strings.Cut(strings.TrimPrefix(path, "/v1beta/models/"), ":")
	if r.Method != http.MethodPost || !strings.HasPrefix(path, "/v1beta/models/") || !ok {
		http.Error(w, `{"error":{"code":404,"message":"not scripted","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("X-Goog-Api-Key"); got != f.key && r.URL.Query().Get("key") != f.key {
		f.problem("x-goog-api-key = %q, want %q", got, f.key)
	}
	var req struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.problem("undecodable request: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens": 10}`)
		return
	}
	hasTool := false
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			hasTool = hasTool || d.Name == "write_file"
		}
	}
	part := map[string]any{"text": "ok"}
	counted := false
	if hasTool && len(req.Contents) > 0 {
		counted = true
		last, _ := json.Marshal(req.Contents[len(req.Contents)-1])
		if !strings.Contains(string(last), `"functionResponse"`) {
			all, _ := json.Marshal(req.Contents)
			artifact := target(f.artifact, string(all))
			if artifact == "" || !strings.Contains(string(all), artifact) {
				f.problem("the prompt does not name the artifact %q", artifact)
			}
			part = map[string]any{"functionCall": map[string]any{"name": "write_file",
				"args": map[string]string{"file_path": artifact, "content": f.content}}}
		} else {
			part = map[string]any{"text": "I wrote the document."}
		}
	}
	if counted {
		f.turn()
	}
	f.bill()
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]int{"promptTokenCount": InputTokens, "cachedContentTokenCount": CachedTokens,
			"candidatesTokenCount": OutputTokens, "totalTokenCount": InputTokens + OutputTokens},
		"modelVersion": model,
	}
	b, _ := json.Marshal(resp)
	if method == "streamGenerateContent" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
