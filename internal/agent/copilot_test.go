package agent

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/config"
)

// testdata/copilot.jsonl is what Copilot CLI 1.0.102 printed with --output-format json, its provider the
// scripted Anthropic model of agenttest (one create tool call, then a text answer); its paths replaced by
// /work/doc and /home/agent.
func TestCopilotParser(t *testing.T) {
	t.Parallel()
	p := &copilotParser{model: "configured"}
	got := replayEvents(t, "testdata/copilot.jsonl", p.event)
	want := []string{
		"copilot: started (claude-sonnet-4-5)",
		describeTool("create", []byte(`{"file_text":"# hello\n","path":"/work/doc/doc.md"}`)),
		"» I wrote the document.",
		"copilot: exit 0 (premium requests: 0)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	if u := p.usage(); u.Turns != 2 || u.Model != "claude-sonnet-4-5" {
		t.Errorf("usage = %+v, want 2 turns of claude-sonnet-4-5", u)
	}
}

// Copilot CLI takes the prompt as one argument: one past Linux's limit on an argument is refused with a
// message that says so, before anything runs.
func TestCopilotPromptTooLong(t *testing.T) {
	t.Parallel()
	r, err := New(config.Agent{Preset: "copilot"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), Invocation{Dir: t.TempDir(), Prompt: strings.Repeat("x", maxArg)})
	if err == nil || !strings.Contains(err.Error(), "takes it as one argument, which Linux limits to 131072 bytes") {
		t.Errorf("Run with a %d-byte prompt: %v", maxArg, err)
	}
}

// replayEvents feeds each line of a CLI's captured output (testdata) to a parser's event and returns the
// progress lines it made.
func replayEvents(t *testing.T, path string, event func([]byte) []string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		got = append(got, event(sc.Bytes())...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
