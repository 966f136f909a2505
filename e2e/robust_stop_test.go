package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestGracefulStop: a cancelled workflow run (SIGTERM to ralph while the agent works) stops the agent's
// process group, records the interruption in the status comment, leaves the issue where the step started
// (without counting a failure), and releases the lock — within a few seconds.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\n"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	e.setControl("sleep", "60")
	p := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, runOpts{track: true})
	e.waitInvocations(1)
	b, err := os.ReadFile(filepath.Join(e.control, "agent.pid"))
	if err != nil {
		t.Fatal(err)
	}
	agentPID, _ := strconv.Atoi(strings.TrimSpace(string(b)))

	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	took := time.Since(start)
	if took > 10*time.Second {
		t.Errorf("ralph took %s to stop after SIGTERM", took)
	}
	if r.exit == 0 {
		t.Errorf("an interrupted run exited 0")
	}
	if alive(agentPID) {
		t.Errorf("the agent (pid %d) still runs after ralph stopped", agentPID)
	}
	e.wantState(n, workflow.ReadyForPlan)
	status := e.statusComment(n)
	if !strings.Contains(status, "interrupted") {
		t.Errorf("the status comment does not record the interruption:\n%s", status)
	}
	if e.commentsStarting(n, "### ralph: plan failed") != 0 {
		t.Errorf("an interruption was counted as a failure")
	}
	if refs := e.lockRefs(); len(refs) != 0 {
		t.Errorf("the lock was not released: %v", refs)
	}
	// The next run does the step.
	e.setControl("sleep", "0")
	r = e.run("workflow_dispatch", dispatchEvent(t, map[string]any{"issue": itoa(n)}), nil)
	if r.exit != 0 || r.outputs["step"] != "plan" {
		t.Fatalf("the next run: exit %d outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
}

// alive says whether a process runs: it exists and is not a zombie waiting for its new parent to reap it
// (the agent's shell is reparented when ralph exits).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "1234 (sh) Z …".
	rest := string(stat)[strings.LastIndexByte(string(stat), ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
