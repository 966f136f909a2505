package agent

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// testdata/pi.jsonl is what pi 0.73.1 printed for `pi -p --mode json`, its anthropic provider the scripted
// model of agenttest (one write tool call, then a text answer), run in /work/doc.
func TestPiParser(t *testing.T) {
	t.Parallel()
	p := &piParser{model: "claude-sonnet-4-5"}
	got := replayEvents(t, "testdata/pi.jsonl", p.event)
	want := []string{
		"pi: started (anthropic/claude-sonnet-4-5)",
		describeTool("write", []byte(`{"content":"# hello\n","path":"/work/doc/doc.md"}`)),
		"» I wrote the document.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	// Each answer: 800 input tokens not from the cache, 200 from it, 50 output, priced by pi at $0.00321.
	u := p.usage()
	if u.Turns != 2 || u.InputTokens != 2000 || u.CacheReadTokens != 400 || u.OutputTokens != 100 ||
		math.Abs(u.CostUSD-2*0.00321) > 1e-12 || u.Model != "anthropic/claude-sonnet-4-5" {
		t.Errorf("usage = %+v, want 2 turns, 2000 input tokens (400 from the cache), 100 output, $0.00642", u)
	}
}

// A failed tool, a retry and a model error are shown with their messages.
func TestPiParserFailures(t *testing.T) {
	t.Parallel()
	p := &piParser{}
	var got []string
	for _, l := range []string{
		`{"type":"tool_execution_end","toolName":"bash","result":{"content":[{"type":"text","text":"exit 2: no such file"}]},"isError":true}`,
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"429 rate limited"}`,
		`{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"400 budget reached","usage":{"input":0,"output":0,"cost":{"total":0}}}}`,
		`{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"not the agent's"}]}}`,
		`not json`,
	} {
		got = append(got, p.event([]byte(l))...)
	}
	want := []string{"  ✗ exit 2: no such file", "pi: retrying (1 of 3): 429 rate limited", "pi: error: 400 budget reached"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
}

// With the gateway, pi's HOME gets a models.json pointing its anthropic provider at the gateway, in place of
// one an earlier run left (a gateway of another port), and pi reads it there (no other agent directory) with
// the gateway's key (no OAuth token of agent.env's); without the gateway, nothing is written.
func TestPiModelsJSONWithGateway(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"models: $(cat \"$HOME/.pi/agent/models.json\" 2>/dev/null)\"\necho \"oauth: [$ANTHROPIC_OAUTH_TOKEN] dir: [$PI_CODING_AGENT_DIR]\"\n"
	if err := os.WriteFile(filepath.Join(bin, "pi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runner, err := New(config.Agent{Preset: "pi"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	stale := filepath.Join(home, ".pi", "agent", "models.json")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte(`{"providers":{"anthropic":{"baseUrl":"http://127.0.0.1:1"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_OAUTH_TOKEN=oat", "PI_CODING_AGENT_DIR=/elsewhere"}
	inv, out := newInvocation(t)
	inv.Env = env
	inv.Gateway = &Gateway{Vendor: gateway.Anthropic, URL: "http://127.0.0.1:9", Key: "k", KeyName: "ANTHROPIC_API_KEY"}
	_, _ = runner.Run(context.Background(), inv)
	for _, w := range []string{`models: {"providers":{"anthropic":{"baseUrl":"http://127.0.0.1:9"}}}`, "oauth: [] dir: []"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("with the gateway, pi got no %q:\n%s", w, out)
		}
	}
	none := t.TempDir()
	inv, out = newInvocation(t)
	inv.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + none, "ANTHROPIC_API_KEY=sk"}
	_, _ = runner.Run(context.Background(), inv)
	if _, err := os.Stat(filepath.Join(none, ".pi")); err == nil || !strings.Contains(out.String(), "models: \n") {
		t.Errorf("without the gateway ralph wrote pi's models.json (%v):\n%s", err, out)
	}
}

// What an earlier agent left in its HOME leads the write nowhere else: a models.json that is a symlink is
// replaced, not written through, and a directory that is a symlink out of HOME is refused.
func TestReplaceInHomeStaysInHome(t *testing.T) {
	t.Parallel()
	files := func(url string) []preset.File { return []preset.File{{Path: ".pi/agent/models.json", Content: url}} }
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".pi", "agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(home, ".pi", "agent", "models.json")); err != nil {
		t.Fatal(err)
	}
	if err := replaceInHome(files("new"), Invocation{Env: []string{"HOME=" + home}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target became %q", b)
	}
	fi, err := os.Lstat(filepath.Join(home, ".pi", "agent", "models.json"))
	if b, _ := os.ReadFile(filepath.Join(home, ".pi", "agent", "models.json")); err != nil || !fi.Mode().IsRegular() || string(b) != "new" {
		t.Errorf("models.json is %v %q (%v), want a file of its own with the new content", fi.Mode(), b, err)
	}
	escape := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(escape, ".pi")); err != nil {
		t.Fatal(err)
	}
	if err := replaceInHome(files("new"), Invocation{Env: []string{"HOME=" + escape}}); err == nil {
		t.Error("a write through a symlink out of HOME was not refused")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside HOME now holds %d entries, want only its own", len(entries))
	}
}
