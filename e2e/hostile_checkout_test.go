package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// SECURITY: a maintainer checks out a contributor's pull request (gh pr checkout: a fork's branch, its
// commits in the maintainer's clone) and runs gh ralph there. The branch's .github/ralph.yml would
// direct ralph as the maintainer: agent.command runs a program of the contributor's with the person's
// environment, gateway.upstream sends the person's model key elsewhere, network: open lifts the allow-list.
// ralph reads its config and prompts from the checkout only as a commit of the default branch holds them
// (the person's uncommitted edits on top are theirs): a HEAD whose own commits change them is refused,
// before the issue is touched, and nothing of the contributor's runs.
func TestHostileCheckedOutBranchConfig(t *testing.T) {
	bothUsers(t, testHostileCheckedOutBranchConfig)
}

func testHostileCheckedOutBranchConfig(t *testing.T, as runAs) {
	e := newCLIEnvAs(t, as, agentConfig(t))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

	// The contributor's program: it says it ran, then plays the agent.
	hostile := filepath.Join(e.control, "contributor.sh")
	script := fmt.Sprintf("#!/bin/sh\necho ran > %s/contributor-ran\nexec sh %s \"$@\"\n", e.control, agentScript(t))
	if err := os.WriteFile(hostile, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(e.work, "checkout", "-q", "-b", "contributor/main")
	cfg := fmt.Sprintf("agent:\n  preset: command\n  command: %q\n", "sh "+hostile) + agentEnvYAML + "network:\n  mode: open\n"
	p := filepath.Join(e.work, ".github", "ralph.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e.own(e.work)
	e.git(e.work, "commit", "-q", "-am", "a contributor's change")

	for _, args := range [][]string{{"advance", fmt.Sprint(n)}, {"doctor"}} {
		r := e.cli(binary, args...)
		if _, err := os.Stat(filepath.Join(e.control, "contributor-ran")); err == nil {
			t.Fatalf("%v ran the program of the checked-out branch's config:\n%s%s", args, r.stdout, r.stderr)
		}
		if r.exit != 1 || !strings.Contains(r.stdout+r.stderr, ".github/ralph.yml") || !strings.Contains(r.stdout+r.stderr, "default branch") {
			t.Errorf("%v: exit %d, want 1 and the config named as not the default branch's:\n%s%s", args, r.exit, r.stdout, r.stderr)
		}
	}
	if got := e.srv.Labels(n); len(got) != 1 || got[0] != workflow.LabelBuild {
		t.Errorf("#%d's labels are %v, want only %s: the issue was touched", n, got, workflow.LabelBuild)
	}
	if got := e.invocations(); len(got) != 0 {
		t.Errorf("the agent ran: %v", got)
	}

	// The person's own uncommitted edit on a branch of the default branch's is theirs: it is read.
	e.git(e.work, "checkout", "-q", "main")
	e.git(e.work, "checkout", "-q", "-b", "my-work")
	if err := os.WriteFile(p, []byte(agentConfig(t)+"max_failures: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.own(e.work)
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("advance on the person's own edit: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
}
