package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// status --json speaks one naming convention, gh's: every key is lowerCamelCase (pullRequest, lastRun,
// costUSD), the usage's too, wherever it comes from (the record's total, the last run, each step).
func TestStatusJSONKeysAreCamelCase(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	u := &agent.Usage{Turns: 2, Requests: 3, InputTokens: 3000, CacheReadTokens: 600, CacheWriteTokens: 10, OutputTokens: 150, CostUSD: 0.0123,
		Model: "claude-sonnet-4-5", Metered: true, HitTurnLimit: true, OverBudget: true, Budget: "issue"}
	n := e.srv.CreateIssue("mona", "Spend", "", workflow.LabelBuild, workflow.HumanNeeded.Label())
	seedStatus(e, n, record.Record{Branch: "ralph/1-spend", Base: "main", Usage: u,
		Last:    &record.Entry{Step: workflow.Research, At: clock, Outcome: "budget reached", Usage: u},
		History: []record.Entry{{Step: workflow.Research, At: clock, Outcome: "budget reached", Usage: u}}})
	if code := e.run("status", fmt.Sprint(n), "--json", "usage,lastRun,pullRequest,failures,iterations,fixes,lock"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var doc any
	if err := json.Unmarshal([]byte(e.stdout.String()), &doc); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	var bad []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if !camel.MatchString(k) {
					bad = append(bad, path+"."+k)
				}
				walk(path+"."+k, c)
			}
		case []any:
			for _, c := range v {
				walk(path+"[]", c)
			}
		}
	}
	walk("", doc)
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("status --json keys not in lowerCamelCase: %v", bad)
	}
	// Every figure of the usage is there, under the same name in the total, the last run and each step.
	var got struct {
		Usage struct {
			Total, LastRun map[string]any
			Steps          []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"turns": 2.0, "requests": 3.0, "inputTokens": 3000.0, "cacheReadTokens": 600.0, "cacheWriteTokens": 10.0, "outputTokens": 150.0,
		"costUSD": 0.0123, "model": "claude-sonnet-4-5", "metered": true, "hitTurnLimit": true, "overBudget": true, "stoppedBy": "issue"}
	for name, m := range map[string]map[string]any{"total": got.Usage.Total, "lastRun": got.Usage.LastRun, "steps[0]": first(got.Usage.Steps)} {
		for k, w := range want {
			if m[k] != w {
				t.Errorf("usage.%s.%s = %v, want %v", name, k, m[k], w)
			}
		}
	}
}

func first(s []map[string]any) map[string]any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}
