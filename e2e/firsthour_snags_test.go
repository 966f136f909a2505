package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFirstHourSnags is the first hour's snags, as a newcomer meets them through the real gh, on a host
// with a private CA (its CA in SSL_CERT_FILE only; ralph's git reaches it over HTTPS): an agent command that
// is not installed (doctor says so, advance refuses before anything changes), a token GitHub refuses (one
// line, exit 4), then a step interrupted with Ctrl-C (the agent's group says it was interrupted, exit 130).
// Every text is checked against a golden file (go test ./e2e -run TestFirstHourSnags -update rewrites them).
func TestFirstHourSnags(t *testing.T) {
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed (apt-get install -y gh); .ci/run installs it")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	srv, dir, ca := privateCAHost(t, now)
	control := controlDir(t)
	// Where the agent's program gets installed: a place the agent's own user may run it from.
	bin := filepath.Join(control, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newCLIEnvOn(t, srv, "", map[string]string{
		"GH_HOST": "localhost", "GH_ENTERPRISE_TOKEN": "test-token", "SSL_CERT_FILE": ca,
		"GH_CONFIG_DIR": filepath.Join(dir, "gh-config"), "XDG_DATA_HOME": filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CACHE_HOME": filepath.Join(dir, "cache"),
		"PATH":    strings.Join([]string{bin, filepath.Dir(gh), filepath.Dir(git), "/usr/bin", "/bin"}, ":"),
		"GH_REPO": "localhost/octo/demo",
		// The agent may write here (and only here, besides its step's places): it says when it started.
		"RALPH_AGENT_WRITABLE": control,
	})
	delete(e.vars, "RALPH_TEST_CONTROL")
	privateCAClone(e, ca)
	n := srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")

	ext := filepath.Join(dir, "gh-ralph")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "gh-ralph"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(gh, "extension", "install", ".")
	install.Dir = ext
	install.Env = e.environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gh extension install: %v\n%s", err, out)
	}

	scrub := func(s string) string {
		s = scrubFirstHour(s, dir, e.work)
		s = strings.ReplaceAll(s, control, "CONTROL")
		// What differs from machine to machine and run to run: the agent's user and the kernel's Landlock,
		// and how long things took.
		s = regexp.MustCompile(`(?m)^the agent runs as .*$`).ReplaceAllString(s, "the agent runs as …")
		return regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`).ReplaceAllString(s, "Ns")
	}
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		t.Helper()
		cmd := exec.Command(gh, args...)
		cmd.Dir = e.work
		cmd.Env = e.environ()
		// Its own process group, as a terminal's foreground job: Ctrl-C reaches gh and ralph alike.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stdout, &stderr
	}
	finish := func(cmd *exec.Cmd, stdout, stderr *bytes.Buffer) result {
		t.Helper()
		err := cmd.Wait()
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
			// gh itself dies of Ctrl-C's signal: a shell says 128 + the signal, as for any program.
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.exit = 128 + int(ws.Signal())
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.stdout+r.stderr, "test-token") {
			t.Errorf("gh %s printed the token", strings.Join(cmd.Args[1:], " "))
		}
		return r
	}
	run := func(args ...string) result {
		t.Helper()
		return finish(start(args...))
	}
	check := func(golden string, r result, exit int, args ...string) {
		t.Helper()
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = a
			if strings.Contains(a, " ") {
				quoted[i] = "'" + a + "'"
			}
		}
		line := "gh " + strings.Join(quoted, " ")
		if r.exit != exit {
			t.Errorf("%s: exit %d, want %d\n%s%s", line, r.exit, exit, r.stdout, r.stderr)
		}
		firstHourGoldenIn(t, "firsthour-snags", golden, "$ "+line+"\n"+scrub(r.stdout)+"--- stderr\n"+scrub(r.stderr))
	}

	// A command of one's own, not installed yet.
	args := []string{"ralph", "init", "--agent", "command", "--agent-command", "my-agent --yes"}
	check("1-init.golden", run(args...), 0, args...)
	for _, c := range [][]string{{"add", ".github"}, {"commit", "-q", "-m", "Set up ralph"}, {"push", "-q"}} {
		cmd := exec.Command(git, c...)
		cmd.Dir, cmd.Env = e.work, e.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	srv.AddWorkflow(".github/workflows/ralph.yml", "ralph")
	srv.SetWorkflowPermissions("write", true)

	// What only this machine lacks is a warning: the Action's side is ready, so doctor exits 0.
	check("2-doctor-missing-command.golden", run("ralph", "doctor"), 0, "ralph", "doctor")
	if r := run("ralph", "enroll", "1"); r.exit != 0 {
		t.Fatalf("gh ralph enroll 1: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	check("3-advance-missing-command.golden", run("ralph", "advance", "1"), 1, "ralph", "advance", "1")
	if slices.ContainsFunc(srv.Labels(n), isStateLabel) {
		t.Errorf("advance with the command missing changed #1's state: %v", srv.Labels(n))
	}

	// The program, installed: it says when it started, then works for longer than anyone waits.
	marker := filepath.Join(control, "started")
	if err := os.WriteFile(filepath.Join(bin, "my-agent"), []byte("#!/bin/sh\ntouch '"+marker+"'\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	// A token GitHub refuses.
	e.vars["GH_ENTERPRISE_TOKEN"] = "not-a-token"
	check("4-doctor-bad-token.golden", run("ralph", "doctor"), 4, "ralph", "doctor")
	// advance says the same before git or anything else meets the token.
	check("4-advance-bad-token.golden", run("ralph", "advance", "1"), 4, "ralph", "advance", "1")
	e.vars["GH_ENTERPRISE_TOKEN"] = "test-token"
	check("5-doctor-ready.golden", run("ralph", "doctor"), 0, "ralph", "doctor")

	// Ctrl-C while the agent works.
	cmd, stdout, stderr := start("ralph", "advance", "1")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the agent did not start\n%s%s", stdout, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := finish(cmd, stdout, stderr)
	check("6-advance-interrupted.golden", r, 130, "ralph", "advance", "1")
	if strings.Contains(r.stderr, "✓") {
		t.Errorf("the interrupted step is marked done:\n%s", r.stderr)
	}
	if got := e.state(n); got != workflow.ResearchNeeded {
		t.Errorf("after Ctrl-C #1 is %s, want %s", got, workflow.ResearchNeeded)
	}

	// The agent fails, step after step, until the issue needs a person: what each failure says to run next
	// is right for where the issue is (advance while it stays, retry once it is Human Needed), with the
	// issue's own number.
	if err := os.WriteFile(filepath.Join(bin, "my-agent"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; ; i++ {
		r := run("ralph", "advance", "1")
		if r.exit != 1 {
			t.Fatalf("gh ralph advance 1 with a failing agent: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, " N`") {
			t.Errorf("the failure's advice names no issue:\n%s", r.stderr)
		}
		if e.state(n) != workflow.HumanNeeded {
			if !strings.Contains(r.stderr, "#1 stays in Research Needed; the failure is on the issue. Run `gh ralph status 1` to see it, `gh ralph advance 1` to try again.") {
				t.Errorf("failure %d, #1 still Research Needed, says:\n%s", i, r.stderr)
			}
			if i == 5 {
				t.Fatalf("#1 is %s after 5 failures", e.state(n))
			}
			continue
		}
		check("7-advance-failed-human-needed.golden", r, 1, "ralph", "advance", "1")
		if strings.Contains(r.stderr, "advance 1` to try again") || !strings.Contains(r.stderr, "gh ralph retry 1") {
			t.Errorf("#1 is Human Needed, and the failure says:\n%s", r.stderr)
		}
		break
	}
}

// firstHourGoldenIn is firstHourGolden for the golden files of testdata/<sub>.
func firstHourGoldenIn(t *testing.T, sub, name, got string) {
	t.Helper()
	firstHourGolden(t, filepath.Join("..", sub, name), got)
}
