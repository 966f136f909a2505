package agent

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Recorded (by hand, from the real CLIs against the fakes) event lines, replayed by a shell "CLI" that
// then keeps running: ralph must stop it at the limit, keep the usage so far, and say which limit.
func TestStreamLimits(t *testing.T) {
	t.Parallel()
	gemini := `{"type":"init","session_id":"s","model":"gemini-2.5-pro"}
{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/w/doc.md","content":"x"}}
{"type":"tool_result","tool_id":"w1","status":"success"}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"go test ./..."}}
`
	claude := `{"type":"system","subtype":"init","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","name":"Bash","input":{"command":"make"}}]}}
{"type":"result","subtype":"success","num_turns":1,"total_cost_usd":3.5,"usage":{"input_tokens":10,"output_tokens":2}}
`
	pi := `{"type":"turn_start"}
{"type":"message_start","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5"}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"command":"make"}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":800,"output":50,"cacheRead":200,"cacheWrite":0,"cost":{"total":0.00321}},"stopReason":"toolUse"}}
{"type":"tool_execution_start","toolName":"bash","args":{"command":"make"}}
`
	tests := []struct {
		name      string
		parser    eventParser
		limits    limits
		events    string
		want      Usage
		wantLines []string
	}{
		{
			name: "gemini over max_turns", parser: &geminiParser{}, limits: limits{MaxTurns: 1}, events: gemini,
			want:      Usage{Turns: 1, Model: "gemini-2.5-pro", HitTurnLimit: true},
			wantLines: []string{"gemini: started (gemini-2.5-pro)", "✎ write_file /w/doc.md", "$ go test ./..."},
		},
		{
			name: "claude over max_cost", parser: &claudeParser{}, limits: limits{MaxCost: 1}, events: claude,
			want:      Usage{Turns: 1, InputTokens: 10, OutputTokens: 2, CostUSD: 3.5, Model: "claude-sonnet-4-5", OverBudget: true},
			wantLines: []string{"claude: started (claude-sonnet-4-5)", "$ make", "claude: success"},
		},
		{
			// pi prices its answers itself: without the gateway, that is what agent.max_cost holds to.
			name: "pi over max_cost", parser: &piParser{}, limits: limits{MaxCost: 0.003}, events: pi,
			want:      Usage{Turns: 1, InputTokens: 1000, CacheReadTokens: 200, OutputTokens: 50, CostUSD: 0.00321, Model: "anthropic/claude-sonnet-4-5", OverBudget: true},
			wantLines: []string{"pi: started (anthropic/claude-sonnet-4-5)", "$ make"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			p := process{argv: []string{"sh", "-c", `printf '%s' "$EVENTS"; echo a warning >&2; sleep 30`}, grace: time.Second, parser: tt.parser, limits: tt.limits}
			inv := Invocation{Dir: t.TempDir(), Env: append(baseEnv(), "EVENTS="+tt.events), Timeout: time.Minute, Output: &out}
			start := time.Now()
			res, err := p.run(context.Background(), inv)
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("Run error = %v, want a *LimitError\n%s", err, out.String())
			}
			if time.Since(start) > 20*time.Second {
				t.Error("the agent was not stopped at the limit")
			}
			if res.Usage == nil || *res.Usage != tt.want {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tt.want)
			}
			for _, l := range tt.wantLines {
				if !strings.Contains(out.String(), l+"\n") {
					t.Errorf("output lacks %q:\n%s", l, out.String())
				}
			}
			if strings.Contains(out.String(), `{"type"`) || !strings.Contains(res.Tail, tt.wantLines[0]) {
				t.Errorf("output or tail is not the readable lines:\n%s\ntail:\n%s", out.String(), res.Tail)
			}
		})
	}
}

func TestCodexParser(t *testing.T) {
	t.Parallel()
	// Recorded from codex exec --json 0.169.0 against the fake, plus a failing command.
	events := `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'go vet ./...'","status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'go vet ./...'","exit_code":1,"status":"failed"}}
{"type":"item.started","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/a.go","kind":"update"}],"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/a.go","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done.\nMore."}}
{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":500,"output_tokens":100}}
`
	p := &codexParser{model: "gpt-5.1-codex"}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(events), "\n") {
		lines = append(lines, p.event([]byte(l))...)
	}
	want := []string{"$ bash -lc 'go vet ./...'", "  ✗ exit 1", "✎ update /w/a.go", "» Done. …"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if got, want := p.usage(), (Usage{Turns: 3, InputTokens: 2000, OutputTokens: 100, Model: "gpt-5.1-codex"}); got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
}
