package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
)

// init names the action whose image holds the chosen agent's CLI (each agent has its own, and
// preset: command the slim one), and doctor finds no fault with the image of what init wrote.
func TestInitNamesTheAgentsImage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // the step's uses:, less its version
	}{
		{[]string{"init", "--agent", "claude"}, "ralph-dev/gh-ralph/claude@"},
		{[]string{"init", "--agent", "codex"}, "ralph-dev/gh-ralph/codex@"},
		{[]string{"init", "--agent", "gemini"}, "ralph-dev/gh-ralph/gemini@"},
		{[]string{"init", "--agent", "command", "--agent-command", "make agent"}, "ralph-dev/gh-ralph@"},
	}
	for _, tt := range tests {
		e := newTestEnv(t)
		if code := e.run(tt.args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, e.stderr)
		}
		path := filepath.Join(e.dir, ".github", "workflows", "ralph.yml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "- uses: "+tt.want) {
			t.Errorf("%v: the workflow does not use %s…", tt.args, tt.want)
		}
		wf, err := doctor.ParseWorkflow(".github/workflows/ralph.yml", b)
		if err != nil || wf == nil {
			t.Fatalf("%v: doctor finds no step of ralph's: %v", tt.args, err)
		}
		cfg, err := compose.LoadConfig(e.dir, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range doctor.Problems(doctor.WorkflowFile(wf, cfg)) {
			if strings.Contains(f.Msg, "image") {
				t.Errorf("%v: doctor: %s", tt.args, f)
			}
		}
	}
	f := &Factory{Version: "1.2.3", Commit: strings.Repeat("ab", 20)}
	if got, want := f.actionRef("codex"), "ralph-dev/gh-ralph/codex@"+strings.Repeat("ab", 20)+" # v1.2.3"; got != want {
		t.Errorf("actionRef(codex) = %q, want %q", got, want)
	}
}
