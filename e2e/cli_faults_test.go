package e2e

// The laptop door when GitHub fails: gh ralph advance run against a server that fails one kind of request
// for the whole run (an outage longer than ralph's retries), then again once it answers. The first run
// ends with an error that says what to run next and leaves no lock; the second finishes the step without
// running the agent again.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// pushesRef says whether a receive-pack request updates ref (its commands name it), leaving its body
// readable for the server.
func pushesRef(r *http.Request, ref string) bool {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && bytes.Contains(b, []byte(ref))
}

func TestCLIAdvanceOutage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// fail installs the outage; on says whether it is on.
		fail func(e *cliEnv, on *atomic.Bool)
	}{
		{"the push of the branch", func(e *cliEnv, on *atomic.Bool) {
			e.srv.GitFaults(func(service string, r *http.Request) githubtest.GitFault {
				if on.Load() && service == "git-receive-pack" && pushesRef(r, "refs/heads/ralph/") {
					return githubtest.GitFault{Status: http.StatusBadGateway}
				}
				return githubtest.GitFault{}
			})
		}},
		{"the artifact comment", func(e *cliEnv, on *atomic.Bool) {
			e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if !on.Load() || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/comments") {
					return false
				}
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				if !bytes.Contains(b, []byte("Research Document")) {
					return false
				}
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`))
				return true
			})
		}},
		{"the status comment", func(e *cliEnv, on *atomic.Bool) {
			e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if !on.Load() || !strings.Contains(r.URL.Path, "/comments") || r.Method == http.MethodGet {
					return false
				}
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				if !bytes.Contains(b, []byte("ralph:status")) {
					return false
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"message":"Service Unavailable"}`))
				return true
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// As a person runs gh ralph: a normal user, whose ralph keeps its repository between runs.
			srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true, GitHTTP: true})
			e := newCLIEnvOnAs(t, asUser, srv, agentConfig(t), cliVars(t, srv))
			e.git(e.work, "remote", "set-url", "origin", srv.GitURL())
			n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
			var on atomic.Bool
			on.Store(true)
			tc.fail(e, &on)

			r := e.cli(binary, "advance", fmt.Sprint(n))
			on.Store(false)
			if r.exit != 1 {
				t.Errorf("advance during the outage: exit %d, want 1\n%s%s", r.exit, r.stdout, r.stderr)
			}
			if want := fmt.Sprintf("gh ralph advance %d", n); !strings.Contains(r.stderr, want) {
				t.Errorf("the error does not say to run %q again:\n%s", want, r.stderr)
			}
			if refs := e.lockRefs(); len(refs) != 0 {
				t.Errorf("the lock was left: %v", refs)
			}
			e.invariants(n)

			r = e.cli(binary, "advance", fmt.Sprint(n))
			if r.exit != 0 {
				t.Fatalf("advance after the outage: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
			}
			e.wantState(n, workflow.ReadyForPlan)
			e.invariants(n)
			if got := e.invocations(); len(got) != 1 {
				t.Errorf("the agent ran %d times (%v), want once: its work was redone", len(got), got)
			}
			if got := e.commentsStarting(n, "## Research Document"); got != 1 {
				t.Errorf("%d research comments, want 1", got)
			}
			if subjects, _ := e.branch("ralph/1-add-a-greeting"); len(matching(subjects, "(?i)research")) != 1 {
				t.Errorf("branch commits %v, want one research commit", subjects)
			}
		})
	}
}

// startCLI starts gh-ralph with args in the person's checkout, in a process group of its own (a terminal's
// foreground group, which Ctrl-C signals whole); wait waits for it.
func (e *cliEnv) startCLI(args ...string) (cmd *exec.Cmd, wait func() result) {
	e.t.Helper()
	cmd = exec.Command(binary, args...)
	cmd.Dir = e.work
	cmd.Env = e.environ()
	cmd.SysProcAttr = e.sysProcAttr()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, func() result {
		err := cmd.Wait()
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
		} else if err != nil {
			e.t.Fatal(err)
		}
		return r
	}
}

// Ctrl-C (SIGINT to the terminal's foreground group) or SIGTERM (to gh ralph alone) at each point of a
// step: while the agent works, while ralph pushes the branch, while it writes the status comment. gh ralph
// stops within seconds with exit 130 and a message that says what to run; the agent is gone, the lock is
// released, and the next advance finishes the step, running the agent again only when it had not finished.
func TestCLIAdvanceStopped(t *testing.T) {
	t.Parallel()
	const (
		atAgent = "the agent"
		atPush  = "the push of the branch"
		atState = "the status comment"
	)
	cases := []struct {
		at    string
		sig   syscall.Signal
		group bool // the signal goes to gh ralph's process group, as a terminal's Ctrl-C does
	}{
		{atAgent, syscall.SIGINT, true},
		{atAgent, syscall.SIGTERM, false},
		{atPush, syscall.SIGINT, true},
		{atState, syscall.SIGTERM, false},
	}
	for _, tc := range cases {
		t.Run(tc.at+" "+tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true, GitHTTP: true})
			e := newCLIEnvOnAs(t, asUser, srv, agentConfig(t), cliVars(t, srv))
			e.git(e.work, "remote", "set-url", "origin", srv.GitURL())
			n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

			var proc atomic.Pointer[os.Process]
			var sent atomic.Bool
			signal := func() {
				if p := proc.Load(); p != nil && !sent.Swap(true) {
					pid := p.Pid
					if tc.group {
						pid = -pid
					}
					if err := syscall.Kill(pid, tc.sig); err != nil {
						t.Error(err)
					}
				}
			}
			// hold signals gh ralph while its request r is being answered, and keeps the answer until gh
			// ralph gives up on it (or a few seconds).
			hold := func(r *http.Request) {
				signal()
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}
			switch tc.at {
			case atAgent:
				e.setControl("sleep", "60")
			case atPush:
				e.srv.GitFaults(func(service string, r *http.Request) githubtest.GitFault {
					if !sent.Load() && service == "git-receive-pack" && pushesRef(r, "refs/heads/ralph/") {
						hold(r)
						return githubtest.GitFault{Status: http.StatusBadGateway}
					}
					return githubtest.GitFault{}
				})
			case atState:
				e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
					if sent.Load() || !strings.Contains(r.URL.Path, "/comments") || r.Method == http.MethodGet {
						return false
					}
					b, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(b))
					if !bytes.Contains(b, []byte("ralph:status")) {
						return false
					}
					hold(r)
					w.WriteHeader(http.StatusServiceUnavailable)
					return true
				})
			}

			cmd, wait := e.startCLI("advance", fmt.Sprint(n))
			proc.Store(cmd.Process)
			if tc.at == atAgent {
				e.waitInvocations(1)
				signal()
			}
			start := time.Now()
			r := wait()
			stopped := r
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("gh ralph took %s to stop", d)
			}
			if !sent.Load() {
				t.Fatalf("the run never reached %s:\n%s%s", tc.at, r.stdout, r.stderr)
			}
			if r.exit != 130 {
				t.Errorf("exit %d, want %d\n%s%s", r.exit, 130, r.stdout, r.stderr)
			}
			if want := fmt.Sprintf("gh ralph advance %d", n); !strings.Contains(r.stderr, want) {
				t.Errorf("the message does not say to run %q:\n%s", want, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(e.control, "agent.pid")); err == nil {
				if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && alive(pid) {
					t.Errorf("the agent (pid %d) still runs", pid)
				}
			}
			if refs := e.lockRefs(); len(refs) != 0 {
				t.Errorf("the lock was left: %v", refs)
			}
			e.invariants(n)

			e.setControl("sleep", "0")
			r = e.cli(binary, "advance", fmt.Sprint(n))
			if r.exit != 0 {
				t.Fatalf("advance after the stop: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
			}
			e.wantState(n, workflow.ReadyForPlan)
			e.invariants(n)
			want := 1
			if tc.at == atAgent {
				want = 2 // the agent had not finished: it works again
			}
			if got := e.invocations(); len(got) != want {
				t.Errorf("the agent ran %d times (%v), want %d\nthe stopped run:\n%s%s\nthe next:\n%s%s", len(got), got, want, stopped.stdout, stopped.stderr, r.stdout, r.stderr)
			}
		})
	}
}
