package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

func TestParseWorkflow(t *testing.T) {
	t.Parallel()
	const head = "on:\n  workflow_dispatch:\n    inputs:\n      issue: {required: true}\n  schedule:\n    - cron: '1 * * * *'\n"
	tests := []struct {
		name, yml string
		want      *Workflow
	}{
		{"no ralph", head + "jobs:\n  a:\n    steps:\n      - uses: actions/checkout@v7\n", nil},
		{"workflow permissions, job env", head + "permissions: write-all\njobs:\n  a:\n    env: {A: x}\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n        env: {B: '${{ secrets.B }}'}\n",
			&Workflow{Path: "w.yml", Dispatchable: true, Permissions: map[string]string{"contents": "write", "issues": "write", "pull-requests": "write", "actions": "write", "checks": "write"},
				Env: map[string]string{"A": "x", "B": "${{ secrets.B }}"}, With: map[string]string{}, Events: []string{"schedule", "workflow_dispatch"}}},
		{"job permissions win", "on: [issues]\npermissions: write-all\njobs:\n  a:\n    permissions:\n      contents: write\n    steps:\n      - uses: ralph-dev/gh-ralph@abc # v1\n        with: {token: '${{ steps.app.outputs.token }}'}\n",
			&Workflow{Path: "w.yml", Permissions: map[string]string{"contents": "write"}, Env: map[string]string{}, With: map[string]string{"token": "${{ steps.app.outputs.token }}"}, Events: []string{"issues"}}},
		{"no permissions", "on: {workflow_dispatch: {}}\njobs:\n  a:\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n",
			&Workflow{Path: "w.yml", Env: map[string]string{}, With: map[string]string{}, Events: []string{"workflow_dispatch"}}},
	}
	for _, tt := range tests {
		got, err := ParseWorkflow("w.yml", []byte(tt.yml))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	app, _ := ParseWorkflow("w.yml", []byte(tests[2].yml))
	if app.ActionsToken() {
		t.Error("an App's token is taken for the Actions token")
	}
	if wf, _ := ParseWorkflow("w.yml", []byte(tests[3].yml)); !wf.ActionsToken() {
		t.Error("no token input is the Actions token")
	}
	if SecretOf("${{ secrets.ANTHROPIC_API_KEY }}") != "ANTHROPIC_API_KEY" || SecretOf("${{ secrets.GITHUB_TOKEN }}") != "" || SecretOf("x") != "" {
		t.Error("SecretOf")
	}
}

// The checks of the workflow file: a board without a project token, an API key the step does not get.
func TestWorkflowFile(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Agent.Env = map[string]string{"ANTHROPIC_API_KEY": ""}
	cfg.Project = &config.Project{Owner: "octo", Number: 3, Field: "Workflow State"}
	wf := &Workflow{Path: "w.yml", Dispatchable: true, Env: map[string]string{}, With: map[string]string{}}
	var msgs []string
	for _, f := range Problems(WorkflowFile(wf, cfg)) {
		msgs = append(msgs, f.String())
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"does not give ralph's step ANTHROPIC_API_KEY", "add env: ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}", "passes no project_token", "gh secret set RALPH_PROJECT_TOKEN"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
}

// A workflow_dispatch without a command input is warned of (a person's command a failed run carries is lost
// there); with one, or without the chain, nothing is said of it.
func TestWorkflowFileCommandInput(t *testing.T) {
	t.Parallel()
	const with = "on:\n  workflow_dispatch:\n    inputs:\n      issue: {required: true}\n      command: {required: false, default: advance}\njobs:\n  a:\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n"
	const without = "on:\n  workflow_dispatch:\n    inputs:\n      issue: {required: true}\njobs:\n  a:\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n"
	warned := func(yml string, chain bool) bool {
		wf, err := ParseWorkflow("w.yml", []byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Chain = chain
		for _, f := range WorkflowFile(wf, cfg) {
			if f.Warn && strings.Contains(f.Msg, "no command input") {
				return true
			}
		}
		return false
	}
	if !warned(without, true) {
		t.Error("no warning for a workflow_dispatch without a command input")
	}
	if warned(with, true) || warned(without, false) {
		t.Error("a warning for a workflow with a command input, or without the chain")
	}
}

// A workflow file that is a link (to /dev/zero, say) or a FIFO is not read: FindWorkflow says so at once
// instead of reading without end.
func TestFindWorkflowReadsOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(path string) error{
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":              func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		root := t.TempDir()
		dir := filepath.Join(root, ".github", "workflows")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := mk(filepath.Join(dir, "ralph.yml")); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := FindWorkflow(root); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: FindWorkflow = %v, want an error naming it not a regular file", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: FindWorkflow did not return", name)
		}
	}
}

// The workflow init writes names its CI "CI" under workflow_run, a placeholder: doctor warns when the
// repository has no workflow of that name (by its name:, or its path when it has none), and says which
// names it has (issue 33).
func TestWorkflowRunNamesAWorkflow(t *testing.T) {
	t.Parallel()
	const ralph = "name: ralph\non:\n  workflow_dispatch:\n    inputs:\n      issue: {required: true}\n  pull_request_review:\n    types: [submitted]\n" +
		"  workflow_run:\n    workflows: [CI]\n    types: [completed]\njobs:\n  a:\n    steps:\n      - uses: ralph-dev/gh-ralph@v1\n"
	tests := []struct {
		name   string
		others map[string]string // file name: contents
		want   []string          // what the warning says; none when nil
	}{
		{"no other workflow", nil, []string{`the workflow "CI" completes`, `no workflow in .github/workflows is named "CI"`, "has no other workflow", "check_suite"}},
		{"CI named otherwise", map[string]string{"test.yml": "name: Tests\non: push\njobs: {}\n", "lint.yml": "on: push\njobs: {}\n"},
			[]string{`named "CI"`, `the repository's workflows are ".github/workflows/lint.yml", "Tests"`, "workflow_run: workflows: in .github/workflows/ralph.yml"}},
		{"CI exists", map[string]string{"ci.yml": "name: CI\non: push\njobs: {}\n"}, nil},
	}
	for _, tt := range tests {
		root := t.TempDir()
		dir := filepath.Join(root, ".github", "workflows")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"ralph.yml": ralph}
		for k, v := range tt.others {
			files[k] = v
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wf, err := FindWorkflow(root)
		if err != nil || wf == nil {
			t.Fatalf("%s: FindWorkflow = %v, %v", tt.name, wf, err)
		}
		ResolveWorkflowRun(root, wf)
		var warned []string
		for _, f := range WorkflowFile(wf, config.Default()) {
			if strings.Contains(f.Msg, "workflow_run") && f.Warn && !f.Problem {
				warned = append(warned, f.String())
			}
		}
		switch {
		case tt.want == nil && len(warned) > 0:
			t.Errorf("%s: warned %q", tt.name, warned)
		case tt.want != nil && len(warned) != 1:
			t.Errorf("%s: %d warnings of workflow_run, want 1: %q", tt.name, len(warned), warned)
		case tt.want != nil:
			for _, w := range tt.want {
				if !strings.Contains(warned[0], w) {
					t.Errorf("%s: the warning does not say %q:\n%s", tt.name, w, warned[0])
				}
			}
		}
	}
}
