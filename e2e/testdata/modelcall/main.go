// Command modelcall is a stand-in for an agent that calls its model through ralph's gateway, for the
// end-to-end tests: the way a `command` agent would, from the variables ralph documents.
//
//	modelcall message      one Anthropic Messages request, streamed, to $ANTHROPIC_BASE_URL with $ANTHROPIC_API_KEY
//	modelcall get PATH     a GET of $RALPH_GATEWAY_URL PATH with $RALPH_GATEWAY_KEY
//	modelcall post PATH BODY [NAME:VALUE]...  a POST of the JSON BODY to $RALPH_GATEWAY_URL PATH with
//	                       $RALPH_GATEWAY_KEY, and the headers given
//
// It prints the answer's status and body and exits 1 unless the status is 200, as a CLI shows an API error
// and stops.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: modelcall message | get PATH | post PATH BODY")
		os.Exit(2)
	}
	var req *http.Request
	var err error
	switch os.Args[1] {
	case "message":
		body := `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say ok."}]}`
		req, err = http.NewRequest("POST", os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", strings.NewReader(body))
		if err == nil {
			req.Header.Set("X-Api-Key", os.Getenv("ANTHROPIC_API_KEY"))
			req.Header.Set("Anthropic-Version", "2023-06-01")
			req.Header.Set("Content-Type", "application/json")
		}
	case "get":
		req, err = http.NewRequest("GET", os.Getenv("RALPH_GATEWAY_URL")+os.Args[2], nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+os.Getenv("RALPH_GATEWAY_KEY"))
		}
	case "post":
		if len(os.Args) < 4 {
			err = fmt.Errorf("post needs a path and a body")
			break
		}
		req, err = http.NewRequest("POST", os.Getenv("RALPH_GATEWAY_URL")+os.Args[2], strings.NewReader(os.Args[3]))
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+os.Getenv("RALPH_GATEWAY_KEY"))
			req.Header.Set("Content-Type", "application/json")
			for _, h := range os.Args[4:] {
				k, v, _ := strings.Cut(h, ":")
				req.Header.Add(k, strings.TrimSpace(v))
			}
		}
	default:
		err = fmt.Errorf("unknown call %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelcall:", err)
		os.Exit(2)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelcall:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("modelcall: %d %s\n", resp.StatusCode, strings.TrimSpace(string(b)))
	if resp.StatusCode != http.StatusOK {
		os.Exit(1)
	}
}
