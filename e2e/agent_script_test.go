package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The scripted agent's files in the control directory stay writable by the next agent, whatever its user:
// ralph gives each run's agent a user of its own, and the agents of runs at the same time can count the
// same invocation (they append to invocations, then count its lines). BenchmarkFleet's 8 runners hit it:
// a plan run failed, "the agent exited with code 1", on cp's "Permission denied" over the prompt copy
// another agent had just made. The race is made here by hand: the second agent counts what the first did.
func TestAgentScriptSameCountOtherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("runs the scripted agent as two users: needs root")
	}
	ctl := controlDir(t)
	dir, err := os.MkdirTemp("", "ralph-agent-prompt-") // the test's own temporary directory is closed to others
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prompt := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(prompt, []byte("Plan it.\n"), 0o644); err != nil { // as ralph writes it
		t.Fatal(err)
	}
	run := func(uid uint32) {
		t.Helper()
		work, err := os.MkdirTemp("", "ralph-agent-work-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(work) })
		if err := os.Chmod(work, 0o777); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", agentScript(t))
		cmd.Dir = work
		cmd.Env = []string{"PATH=/usr/bin:/bin", "RALPH_TEST_CONTROL=" + ctl, "RALPH_COMMAND=plan", "RALPH_ISSUE=1",
			"RALPH_PROMPT_FILE=" + prompt, "RALPH_ARTIFACT=" + filepath.Join(work, "plan.md")}
		cmd.Stdin = strings.NewReader("Plan it.\n")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the agent as uid %d: %v\n%s", uid, err, out)
		}
	}
	run(64201)
	// The second agent appends before the first counts: both count 1.
	if err := os.WriteFile(filepath.Join(ctl, "invocations"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	run(64202)
}
