package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// doctor and advance agree whether the agent's user can run the agent's program (issue 33): as root the
// agent runs as a user of its own, and a command in a directory closed to other users is one it cannot
// run. doctor used to check it as root's, and passed what advance then refused; both now check it
// against the one boundary (compose.Boundary, as compose.Build makes it).
func TestDoctorAndAdvanceAgreeOnTheAgentsUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: the agent runs as ralph's own user, who can run whatever ralph can")
	}
	e := newTestEnv(t)
	e.asUser("octocat")
	e.srv.SetPermission("octocat", "write")
	// Right under the system's temporary directory, which every user may pass through (t.TempDir's
	// parents are closed).
	closed, err := os.MkdirTemp("", "ralph-agent-uid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(closed) })
	prog := filepath.Join(closed, "my-agent")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.writeConfig("agent:\n  preset: command\n  command: " + prog + " --yes\n")
	n := e.srv.CreateIssue("mona", "Add dark mode", "", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	want := "cannot run " + prog

	e.run("doctor")
	var said string
	for _, line := range strings.Split(e.stdout.String(), "\n") {
		if strings.Contains(line, want) {
			said = line
		}
	}
	if said == "" || !strings.HasPrefix(said, "! ") {
		t.Errorf("doctor does not warn that the agent's user %s:\n%s", want, e.stdout)
	}

	before := e.srv.Labels(n)
	if code := e.run("advance", fmt.Sprint(n)); code == 0 || !strings.Contains(e.stderr.String(), want) {
		t.Errorf("advance: exit %d; want it to refuse because the agent's user %s:\n%s", code, want, e.stderr)
	}
	if got := e.srv.Labels(n); strings.Join(got, ",") != strings.Join(before, ",") || len(e.srv.Comments(n)) != 0 {
		t.Errorf("advance changed the issue: labels %v (were %v), %d comments", got, before, len(e.srv.Comments(n)))
	}

	// Opened to every user, both pass it.
	if err := os.Chmod(closed, 0o755); err != nil {
		t.Fatal(err)
	}
	e.run("doctor")
	if strings.Contains(e.stdout.String(), want) {
		t.Errorf("doctor still says the agent's user %s:\n%s", want, e.stdout)
	}
}
