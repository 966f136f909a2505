package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// copyExamples puts the examples a user copies into root's .github/workflows under the names the README
// gives them.
func copyExamples(t *testing.T, root string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(root, ".github", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, example := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", example))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The sweep's workflow has no issue input: its runs carry issues forward through the label workflow's
// dispatch, which ralph finds (or the config names), and doctor says so instead of failing the sweep.
func TestResolveChain(t *testing.T) {
	both := map[string]string{"ralph.yml": "ralph.yml", "ralph-sweep.yml": "sweep.yml"}
	tests := []struct {
		name     string
		files    map[string]string
		workflow string
		chain    string // the Chain's path; "" none
		problem  string // a problem doctor reports; "" none
	}{
		{name: "the sweep finds the label workflow", files: both, chain: ".github/workflows/ralph.yml"},
		{name: "the config names it", files: both, workflow: "ralph.yml", chain: ".github/workflows/ralph.yml"},
		{name: "the sweep alone", files: map[string]string{"ralph-sweep.yml": "sweep.yml"},
			problem: "no other workflow that runs ralph has one"},
		{name: "the config names the sweep", files: both, workflow: "ralph-sweep.yml",
			problem: "workflow: ralph-sweep.yml in .github/ralph.yml names .github/workflows/ralph-sweep.yml, which does not run ralph on a workflow_dispatch with an issue input"},
		{name: "the config names no file", files: both, workflow: "nope.yml",
			problem: "workflow: nope.yml in .github/ralph.yml names no readable workflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			copyExamples(t, root, tt.files)
			b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "ralph-sweep.yml"))
			if err != nil {
				t.Fatal(err)
			}
			sweep, err := ParseWorkflow(".github/workflows/ralph-sweep.yml", b)
			if err != nil || sweep == nil {
				t.Fatalf("ParseWorkflow: %v, %v", sweep, err)
			}
			cfg := config.Default()
			cfg.Workflow = tt.workflow
			ResolveChain(root, sweep, cfg)
			got := ""
			if sweep.Chain != nil {
				got = sweep.Chain.Path
			}
			if got != tt.chain {
				t.Errorf("Chain = %q, want %q", got, tt.chain)
			}
			var problems []string
			for _, f := range Problems(WorkflowFile(sweep, cfg)) {
				problems = append(problems, f.Msg)
			}
			all := strings.Join(problems, "\n")
			if tt.problem == "" && strings.Contains(all, "cannot start its next step") || tt.problem != "" && !strings.Contains(all, tt.problem) {
				t.Errorf("problems:\n%s\nwant one saying %q", all, tt.problem)
			}
		})
	}
}

// The workflow the chain dispatches titles a run on an issue "ralph #N" (as init writes it), by which a
// sweep passes over issues whose run is queued; doctor warns when it does not.
func TestChainRunName(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	without := strings.Join(slices.DeleteFunc(strings.Split(string(b), "\n"), func(l string) bool { return strings.HasPrefix(l, "run-name:") }), "\n")
	for _, tt := range []struct {
		name string
		text string
		warn bool
	}{{"as init writes it", string(b), false}, {"without run-name", without, true}} {
		wf, err := ParseWorkflow(".github/workflows/ralph.yml", []byte(tt.text))
		if err != nil || wf == nil {
			t.Fatalf("%s: %v %v", tt.name, wf, err)
		}
		ResolveChain(t.TempDir(), wf, config.Default())
		warned := false
		for _, f := range WorkflowFile(wf, config.Default()) {
			warned = warned || f.Warn && strings.Contains(f.Msg, "run-name")
		}
		if warned != tt.warn {
			t.Errorf("%s: warned about run-name %v, want %v", tt.name, warned, tt.warn)
		}
	}
}
