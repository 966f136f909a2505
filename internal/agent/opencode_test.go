package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata/opencode.jsonl is what opencode 1.18.18 printed for `opencode run --format json`, its anthropic
// provider the scripted model of agenttest (one write tool call, then a text answer); its paths replaced by
// /work/doc.
func TestOpencodeParser(t *testing.T) {
	t.Parallel()
	p := &opencodeParser{model: "anthropic/claude-sonnet-4-5"}
	got := replayEvents(t, "testdata/opencode.jsonl", p.event)
	want := []string{
		"opencode: started (anthropic/claude-sonnet-4-5)",
		describeTool("write", []byte(`{"content":"# hello\n","filePath":"/work/doc/doc.md"}`)),
		"» I wrote the document.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	if u := p.usage(); u.Turns != 2 || u.InputTokens != 2000 || u.CacheReadTokens != 400 || u.OutputTokens != 100 {
		t.Errorf("usage = %+v, want 2 turns, 2000 input tokens (400 from the cache), 100 output", u)
	}
}
