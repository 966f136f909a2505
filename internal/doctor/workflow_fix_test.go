package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// The fix step needs the workflow to start on reviews and failed checks, and its token to read checks and
// job logs; doctor says what is missing, and nothing of it stops a run from starting.
func TestFixFindings(t *testing.T) {
	t.Parallel()
	const steps = "jobs:\n  a:\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n"
	const perms = "permissions: {contents: write, issues: write, pull-requests: write, actions: write, checks: read}\n"
	tests := []struct {
		name, yml string
		want      []string // in the problems
	}{
		{"everything", "on: [workflow_dispatch, pull_request_review, workflow_run]\n" + perms + steps, nil},
		{"check_suite does for CI", "on: [pull_request_review, check_suite]\n" + perms + steps, nil},
		{"no permissions: the repository's default", "on: [pull_request_review, check_suite]\n" + steps, nil},
		{"no review event", "on: [workflow_run]\n" + perms + steps, []string{"does not start on pull_request_review", "pull_request_review: {types: [submitted]}"}},
		{"no check event", "on: {pull_request_review: {types: [submitted]}}\n" + perms + steps, []string{"does not start on workflow_run or check_suite", "workflow_run: {workflows:"}},
		{"no checks: read", "on: [pull_request_review, workflow_run]\npermissions: {contents: write, actions: write}\n" + steps, []string{"read checks: read", "set checks: read"}},
		{"no actions at all", "on: [pull_request_review, workflow_run]\npermissions: {checks: read}\n" + steps, []string{"read actions: read"}},
		{"read-all reads", "on: [pull_request_review, workflow_run]\npermissions: read-all\n" + steps, nil},
	}
	for _, tt := range tests {
		wf, err := ParseWorkflow("w.yml", []byte(tt.yml))
		if err != nil || wf == nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var msgs []string
		for _, f := range Problems(fixFindings(wf)) {
			if !strings.Contains(f.Msg, FixStep) {
				t.Errorf("%s: %q does not say it is about the fix step, so it would stop runs from starting", tt.name, f.Msg)
			}
			msgs = append(msgs, f.String())
		}
		got := strings.Join(msgs, "\n")
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: problems %q, want none", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems do not say %q:\n%s", tt.name, w, got)
			}
		}
	}
}

// The workflow gh ralph init writes (examples/ralph.yml is the same file) passes doctor's workflow checks.
func TestExampleWorkflowPassesDoctor(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := ParseWorkflow(".github/workflows/ralph.yml", b)
	if err != nil || wf == nil {
		t.Fatalf("ParseWorkflow: %v", err)
	}
	cfg := config.Default()
	cfg.Agent.Env = map[string]string{"ANTHROPIC_API_KEY": ""}
	for _, f := range Problems(WorkflowFile(wf, cfg)) {
		t.Errorf("examples/ralph.yml: %s", f)
	}
}
