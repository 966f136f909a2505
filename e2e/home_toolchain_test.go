package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// As root on a laptop, gh ralph advance runs a verify whose program is a pyenv shim under the person's
// home, closed to other users: the agent's uid runs it, read-only, and the home keeps its mode.
func TestHomeToolchainThroughCLI(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base, err := os.MkdirTemp("", "ralph-e2e-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "root")
	shims := filepath.Join(home, ".pyenv", "shims")
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shims, "python"), []byte("#!/bin/sh\nid -u > \"$RALPH_TEST_CONTROL/shim-uid\"\ntouch \"$0.mine\" 2>/dev/null && echo WROTE >> \"$RALPH_TEST_CONTROL/shim-uid\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newCLIEnvAs(t, runAs{}, agentConfig(t)+"verify:\n  - python -m pytest\nresearch: false\nreview: skip\n")
	e.vars["HOME"] = home
	e.vars["PATH"] = shims + ":" + os.Getenv("PATH")
	e.setControl("phases", "1")
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-progress"); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(e.control, "shim-uid"))
	if err != nil {
		t.Fatalf("verify did not run the shim: %v", err)
	}
	if uid := strings.TrimSpace(string(got)); uid == "0" || uid == "" || strings.Contains(uid, "WROTE") {
		t.Errorf("the shim ran as %q, want the agent's uid, read-only", got)
	}
	if st, err := os.Stat(home); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the home's mode: %v %v", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(shims, "python.mine")); err == nil {
		t.Error("the agent wrote into the person's toolchain")
	}
}
