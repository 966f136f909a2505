package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// statusGolden checks what gh ralph status printed against testdata/status/name (go test ./e2e -run
// 'TestStatus' -update rewrites it), with times, paths and the run's holder made the same on every run.
func statusGolden(t *testing.T, e *cliEnv, name string, r result) {
	t.Helper()
	got := fmt.Sprintf("exit %d\n%s--- stderr\n%s", r.exit, r.stdout, r.stderr)
	if strings.Contains(got, "\x1b") {
		t.Errorf("%s: an escape code off a terminal:\n%q", name, got)
	}
	got = strings.ReplaceAll(got, e.work, "CHECKOUT")
	got = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(got, "TIME")
	got = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m\d\ds)\b`).ReplaceAllString(got, "Ns")
	got = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(got, "HOST")
	got = regexp.MustCompile(`\(pid \d+\)`).ReplaceAllString(got, "(pid N)")
	got = regexp.MustCompile(`\d\d:\d\d UTC`).ReplaceAllString(got, "HH:MM UTC")
	got = regexp.MustCompile(`\d{4}-\d\d-\d\d`).ReplaceAllString(got, "DATE")
	got = regexp.MustCompile(`on [A-Za-z0-9._-]+ \(pid`).ReplaceAllString(got, "on MACHINE (pid")
	firstHourGoldenIn(t, "status", name, got)
}

// gh ralph status N while a step runs (the running label on, the lock held) says the issue is running, by
// whom and since when; the running label is no disagreement with ralph's record: neither on the issue's
// first step (enrolled in the same run, no record yet) nor on a later one (the record says Ready for Plan).
func TestStatusWhileRunning(t *testing.T) {
	t.Parallel()
	hold := `touch "$RALPH_TEST_CONTROL/started-$RALPH_COMMAND"; if [ -f "$RALPH_TEST_CONTROL/hold-$RALPH_COMMAND" ]; then sleep 60; fi; ` + agentCommand(t)
	e := newCLIEnv(t, fmt.Sprintf("agent:\n  preset: command\n  command: %q\n", hold)+agentEnvYAML)
	n := e.srv.CreateIssue(maintainer, "Slow", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	during := func(step, golden string) {
		t.Helper()
		e.setControl("hold-"+step, "")
		defer os.Remove(filepath.Join(e.control, "hold-"+step))
		cmd := exec.Command(binary, "advance", fmt.Sprint(n))
		cmd.Dir = e.work
		cmd.Env = e.environ()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(e.control, "started-"+step)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agent did not start %s\n%s", step, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		r := e.cli(binary, "status", fmt.Sprint(n))
		for _, wrong := range []string{"disagree", "not backed by a record"} {
			if strings.Contains(r.stdout+r.stderr, wrong) {
				t.Errorf("status during %s says %q of the running label:\n%s%s", step, wrong, r.stdout, r.stderr)
			}
		}
		statusGolden(t, e, golden, r)
	}
	during("research", "running-first-step.golden")
	// The interrupted research again, to its end, then the plan step, held.
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	during("plan", "running-plan.golden")
}

// gh ralph status with a config it cannot use still shows what it reads (it changes nothing), then the
// config's error, and exits as a config error does.
func TestStatusInvalidConfig(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.cli(binary, "enroll", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("enroll: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(e.work, ".github", "ralph.yml"), []byte("agent:\n  preset: command\n  comand: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"invalid-config-issue.golden", []string{"status", fmt.Sprint(n)}},
		{"invalid-config-pipeline.golden", []string{"status"}},
	} {
		r := e.cli(binary, tt.args...)
		if !strings.Contains(r.stdout, "Add a greeting") {
			t.Errorf("%s shows nothing of the issue with an invalid config:\n%s%s", strings.Join(tt.args, " "), r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "comand") {
			t.Errorf("%s does not say what is wrong with the config:\n%s", strings.Join(tt.args, " "), r.stderr)
		}
		statusGolden(t, e, tt.golden, r)
	}
}

// gh ralph advance on an issue whose ralph:build someone without write access added takes the step, and
// the status comment it writes says that the issue then waits for a writer (no sweep takes it, and no chain
// follows a step taken here), not that ralph goes on by itself; once the person's enroll made the label
// theirs, the next step's comment says ralph goes on by itself.
func TestStatusCommentOutsiderLabel(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	e.srv.SetTokenLogin(maintainer) // the person's own token: what gh ralph writes is theirs
	e.srv.SetPermission("mallory", "triage")
	n := e.srv.CreateIssue("mallory", "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, "mallory")
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	body := e.statusComment(n)
	if !strings.Contains(body, "ralph waits: `ralph:build` was added by `@mallory`, who may not drive ralph") ||
		!strings.Contains(body, fmt.Sprintf("`gh ralph enroll %d`", n)) || strings.Contains(body, "on its own") {
		t.Errorf("the status comment of an issue no sweep takes:\n%s", body)
	}
	if r := e.cli(binary, "enroll", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("enroll: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if body := e.statusComment(n); !strings.Contains(body, "### What you can do\n\nNothing: ralph ") || strings.Contains(body, "may not drive ralph") {
		t.Errorf("the status comment once the person's enroll made the label theirs:\n%s", body)
	}
}
