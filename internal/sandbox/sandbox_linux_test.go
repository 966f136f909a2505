package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// The tests run hostile scripts under a real supervisor, ralph's own binary, built once. Each test that
// switches to another uid takes one no process has (ReserveIDs): the sweeps kill every process of the agent's
// uid, and tests run in parallel, with each other and with other packages' tests.

// Environment of the test binary re-run as a helper: a whole program of its own, which may call Prepare.
const (
	helperEnv   = "RALPH_SANDBOX_TEST_HELPER"
	launcherEnv = "RALPH_SANDBOX_TEST_LAUNCHER"
)

// launcher is ralph's binary, the supervisor; helper is a copy of this test binary that another uid can run.
var launcher, helper string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ralph-sandbox-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Another uid runs what is in here.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	launcher = filepath.Join(dir, "gh-ralph")
	build := exec.Command("go", "build", "-o", launcher, "../../cmd/gh-ralph")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as released
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build gh-ralph: %v\n%s", err, out)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	helper = filepath.Join(dir, "sandbox.test")
	if b, err := os.ReadFile(self); err != nil || os.WriteFile(helper, b, 0o755) != nil {
		fmt.Fprintf(os.Stderr, "copy the test binary: %v\n", err)
		return 1
	}
	return m.Run()
}

// runHelper is the test binary as a program of its own.
//
//   - "prepare" and "no-prepare": call Prepare (or not), then run sh -c $SCRIPT as a child, as ralph runs
//     an agent of the same user.
//   - "reap": Prepare, then run sh -c $SCRIPT under a boundary with ReapDescendants (as $AGENT_UID when
//     set), wait for $D/ready,
//     kill the supervisor's group with SIGKILL as ralph does after the grace period, and Reap. It prints
//     how many of the agent's processes were left before Reap, and then how many zombies Reap left it as
//     their parent.
func runHelper(mode string) int {
	script := os.Getenv("SCRIPT")
	switch mode {
	case "kill-alone":
		return killAlone()
	case "prepare", "no-prepare":
		if mode == "prepare" {
			if err := Prepare(); err != nil {
				fmt.Println("Prepare:", err)
				return 1
			}
		}
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Println("run:", err)
			return 1
		}
		return 0
	case "reap":
		if err := Prepare(); err != nil {
			fmt.Println("Prepare:", err)
			return 1
		}
		d := os.Getenv("D")
		cfg := Config{ReapDescendants: true, Launcher: os.Getenv(launcherEnv), Writable: []string{d}}
		if uid, err := strconv.Atoi(os.Getenv("AGENT_UID")); err == nil {
			cfg.Separate, cfg.UID, cfg.GID = true, uid, uid
		}
		b, err := New(cfg)
		if err != nil {
			fmt.Println("New:", err)
			return 1
		}
		cmd := b.Command("/bin/sh", []string{"-c", script})
		cmd.Dir, cmd.Stdout, cmd.Stderr = d, os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return 1
		}
		if !waitFile(filepath.Join(d, "ready")) {
			fmt.Println("the agent never got ready")
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		fmt.Printf("before=%d\n", settle(d, 2))
		if _, err := b.Reap(); err != nil {
			fmt.Println("Reap:", err)
			return 1
		}
		fmt.Printf("zombies=%d\n", zombieChildren())
		return 0
	case "ipc":
		return ipcHelper()
	case "keyring-add":
		if _, err := unix.AddKey("user", "ralph-test-left", []byte("left behind"), unix.KEY_SPEC_USER_KEYRING); err != nil {
			fmt.Println("add_key:", err)
			return 0
		}
		fmt.Println("added")
		return 0
	case "keyring-find":
		if _, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", "ralph-test-left", 0); err != nil {
			fmt.Println("keyctl search:", err)
			return 0
		}
		fmt.Println("found")
		return 0
	case "mqueue-make", "mqueue-find":
		return mqueueHelper(mode == "mqueue-make")
	case "keyring-clear":
		_, _ = unix.KeyctlInt(unix.KEYCTL_CLEAR, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
		return 0
	case "firewall":
		return firewallHelper()
	case "firewall-install":
		return firewallInstallHelper()
	case "firewall-probe":
		fwProbe(strings.Split(os.Getenv("TARGETS"), ";"))
		return 0
	}
	fmt.Println("unknown helper mode", mode)
	return 2
}

// zombieChildren is how many children of this process are zombies.
func zombieChildren() int {
	n := 0
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				if p, err := readProc(pid); err == nil && p.dead() {
					n++
				}
			}
		}
	}
	return n
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: switching the agent to another uid")
	}
}

// agentUID is a uid for the agent that no process has (for a gid too), or -1 when the agent runs as the
// test's user; separate skips the test when that needs root.
func agentUID(t *testing.T, separate bool) int {
	t.Helper()
	if !separate {
		return -1
	}
	needRoot(t)
	uid, _ := reservedIDs(t)
	return uid
}

func mode(separate bool) string {
	if separate {
		return "another uid"
	}
	return "same user"
}

func needLandlock(t *testing.T, b *Boundary, abi int) {
	t.Helper()
	if b.ABI() < abi {
		t.Skipf("needs Landlock ABI %d, this kernel has %d", abi, b.ABI())
	}
}

// openDir is a new directory that uid (when not -1) owns and everyone can traverse, which t.TempDir is not.
func openDir(t *testing.T, uid int) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ralph-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func newBoundary(t *testing.T, cfg Config) *Boundary {
	t.Helper()
	cfg.Launcher = launcher
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// run runs script under b in dir, as ralph runs an agent, and returns its output and exit code. It does not
// Reap.
func run(t *testing.T, b *Boundary, dir, script string, env ...string) (string, int) {
	t.Helper()
	cmd := b.Command("/bin/sh", []string{"-c", script})
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Without the boundary, what the script leaves holds the output open for ever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Errorf("wait: %v", err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// running is the processes, not zombies, whose command line mentions marker.
func running(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if p, err := readProc(pid); err == nil && !p.dead() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// settle waits a little for no more than want processes to mention marker, as the kernel finishes kills,
// and returns how many do.
func settle(marker string, want int) int {
	n := len(running(marker))
	for deadline := time.Now().Add(2 * time.Second); n > want && time.Now().Before(deadline); n = len(running(marker)) {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// killMarked ends, after the test, whatever a failing test left running.
func killMarked(t *testing.T, marker string) {
	t.Cleanup(func() {
		for _, pid := range running(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func waitFile(path string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// survivorScript leaves three processes that append to $D/a, $D/b and $D/c every 50 ms: one in a session
// of its own (setsid); one double-forked (an orphan), in a session of its own and deaf to SIGTERM; one
// double-forked in the process group. All hold the output open.
const survivorScript = `
loop='while :; do echo x >> "$1"; sleep 0.05; done'
setsid sh -c "$loop" survivor "$D/a" &
(setsid sh -c "trap '' TERM INT HUP; $loop" survivor "$D/b" &)
(sh -c "$loop" survivor "$D/c" &)
while [ ! -s "$D/a" ] || [ ! -s "$D/b" ] || [ ! -s "$D/c" ]; do sleep 0.01; done
touch "$D/ready"
`

// checkStopped fails t unless nothing that mentions d runs and the files in d stop growing.
func checkStopped(t *testing.T, d string) {
	t.Helper()
	if pids := running(d); len(pids) > 0 {
		t.Errorf("still running after the agent ended: %v", pids)
	}
	size := func() int64 {
		var n int64
		for _, f := range []string{"a", "b", "c"} {
			if info, err := os.Stat(filepath.Join(d, f)); err == nil {
				n += info.Size()
			}
		}
		return n
	}
	before := size()
	time.Sleep(300 * time.Millisecond)
	if after := size(); after != before {
		t.Errorf("the agent's files still grow: %d bytes, then %d", before, after)
	}
}

func TestSupervisorKillsWhatTheAgentLeaves(t *testing.T) {
	t.Parallel()
	for _, separate := range []bool{false, true} {
		t.Run(mode(separate), func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, separate)
			d := openDir(t, uid)
			killMarked(t, d)
			b := newBoundary(t, Config{Separate: separate, UID: uid, GID: uid, Writable: []string{d}})
			out, code := run(t, b, d, survivorScript, "D="+d)
			if code != 0 {
				t.Fatalf("exit code %d, output:\n%s", code, out)
			}
			// No Reap: the supervisor cleaned up before it exited.
			checkStopped(t, d)
		})
	}
}

func TestReapAfterTheSupervisorWasKilled(t *testing.T) {
	t.Parallel()
	script := survivorScript + "exec sleep 300\n"
	t.Run("another uid", func(t *testing.T) {
		t.Parallel()
		uid := agentUID(t, true)
		d := openDir(t, uid)
		killMarked(t, d)
		b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}})
		cmd := b.Command("/bin/sh", []string{"-c", script})
		cmd.Dir, cmd.Env = d, []string{"PATH=/usr/bin:/bin", "D=" + d}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !waitFile(filepath.Join(d, "ready")) {
			t.Fatal("the agent never got ready")
		}
		// What ralph does after the grace period: the supervisor has no chance to clean up.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		// The group's SIGKILL took the third.
		if n := settle(d, 2); n != 2 {
			t.Fatalf("%d processes left before Reap, want the 2 outside the process group", n)
		}
		// The two, and maybe a sleep of theirs.
		killed, err := b.Reap()
		if err != nil || killed < 2 {
			t.Errorf("Reap = %d, %v; want at least 2, nil", killed, err)
		}
		checkStopped(t, d)
		if killed, err := b.Reap(); killed != 0 || err != nil {
			t.Errorf("Reap again = %d, %v; want 0, nil", killed, err)
		}
	})
	t.Run("same user, ralph the subreaper", func(t *testing.T) {
		t.Parallel()
		// Prepare and ReapDescendants are for a whole program: a helper process is one.
		d := openDir(t, -1)
		killMarked(t, d)
		cmd := exec.Command(helper)
		cmd.Env = []string{helperEnv + "=reap", launcherEnv + "=" + launcher, "PATH=/usr/bin:/bin", "D=" + d, "SCRIPT=" + script}
		cmd.WaitDelay = 2 * time.Second // what Reap missed may hold the helper's output
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "before=2") {
			t.Fatalf("helper said %q, want the 2 outside the process group left before Reap", out)
		}
		checkStopped(t, d)
	})
}

func TestAnotherUID(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, -1)
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}})
	cmd := b.Command("/bin/sh", []string{"-c", `id -u; id -g; id -G`})
	cmd.Dir, cmd.Env = d, []string{"PATH=/usr/bin:/bin"}
	// Ralph in a group, which the agent must not keep.
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{4242}}
	out, err := cmd.Output()
	if want := fmt.Sprintf("%d\n%d\n%d\n", uid, uid, uid); string(out) != want || err != nil {
		t.Errorf("id -u, -g, -G = %q (%v), want %q", out, err, want)
	}
	if got, want := b.Describe(), fmt.Sprintf("uid %d, gid %d, no groups;", uid, uid); !strings.HasPrefix(got, want) {
		t.Errorf("Describe() = %q, want it to start %q", got, want)
	}
	// Unset, the ids are AgentUID and AgentGID.
	b = newBoundary(t, Config{Separate: true})
	if got, want := strings.Join(b.Command("id", nil).Args, " "), "-separate -uid 61000 -gid 61000 "; !strings.Contains(got, want) {
		t.Errorf("Command = %q, want it to hold %q", got, want)
	}
}

func TestAnotherUIDCannotReachRalph(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	rootDir := openDir(t, 0) // root's, 0755, and in Writable: only the uid keeps the agent out
	secret := filepath.Join(rootDir, "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := fmt.Sprintf("/proc/%d/environ", os.Getpid())
	if b, err := os.ReadFile(environ); err != nil || !bytes.Contains(b, []byte("PATH=")) {
		t.Fatalf("the test cannot read its own %s: %v", environ, err)
	}
	tests := []struct {
		name   string
		script string
	}{
		{"read ralph's environment", `cat "$ENVIRON"`},
		{"read a root file", `cat "$SECRET"`},
		{"write a root directory", `echo x > "$ROOTDIR/planted"`},
		{"kill the supervisor", `kill -KILL $PPID`},
	}
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d, rootDir}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := `if (` + tt.script + `) >/dev/null 2>&1; then echo DONE; else echo denied; fi`
			out, code := run(t, b, d, script, "ENVIRON="+environ, "SECRET="+secret, "ROOTDIR="+rootDir)
			if out != "denied\n" || code != 0 {
				t.Errorf("output %q, exit code %d; want denied, 0", out, code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(rootDir, "planted")); err == nil {
		t.Error("the agent wrote in root's directory")
	}
}

func TestAnotherUIDCannotRegainRoot(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	// A setuid-root program, as sudo or su would be. Without Landlock, which also sets no_new_privs, the
	// supervisor's own no_new_privs is all that keeps it from running as root.
	suid := filepath.Join(openDir(t, 0), "id")
	b, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Skipf("no id program to make setuid: %v", err)
	}
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	plain := exec.Command(suid, "-u")
	plain.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	if out, err := plain.Output(); err != nil || string(out) != "0\n" {
		t.Skipf("setuid programs do not run as root here (%q, %v): nothing to prove", out, err)
	}
	bd := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, noLandlock: true})
	out, code := run(t, bd, d, `"$SUID" -u`, "SUID="+suid)
	if want := fmt.Sprintf("%d\n", uid); out != want || code != 0 {
		t.Errorf("setuid-root id -u = %q (exit code %d), want %q", out, code, want)
	}
}

func TestSupervisorOutlivesSIGTERM(t *testing.T) {
	t.Parallel()
	d := openDir(t, -1)
	killMarked(t, d)
	b := newBoundary(t, Config{Writable: []string{d}})
	// The agent takes its time over SIGTERM, which it must get (not ignore), and leaves processes behind
	// that only the supervisor, still there, can find.
	script := `trap 'sleep 0.2; exit 3' TERM
` + survivorScript + `while :; do sleep 0.05; done`
	cmd := b.Command("/bin/sh", []string{"-c", script})
	cmd.Dir, cmd.Env = d, []string{"PATH=/usr/bin:/bin", "D=" + d}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitFile(filepath.Join(d, "ready")) {
		t.Fatal("the agent never got ready")
	}
	// What ralph does on a timeout, before the grace period ends.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	stop := time.AfterFunc(5*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop.Stop()
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit code %d, want the agent's 3", code)
	}
	checkStopped(t, d)
}

func TestLandlockConfinesWrites(t *testing.T) {
	t.Parallel()
	for _, separate := range []bool{false, true} {
		t.Run(mode(separate), func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, separate)
			inside := openDir(t, uid)
			// Anyone may write outside by the mode bits: only Landlock stops the agent.
			outside := openDir(t, -1)
			if err := os.Chmod(outside, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "existing"), []byte("x"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(outside, "existing"), 0o666); err != nil {
				t.Fatal(err)
			}
			b := newBoundary(t, Config{Separate: separate, UID: uid, GID: uid, Writable: []string{inside}})
			needLandlock(t, b, 1)
			if got, want := b.Describe(), fmt.Sprintf("landlock ABI %d, writes confined to %s", b.ABI(), inside); !strings.Contains(got, want) {
				t.Errorf("Describe() = %q, want it to say %q", got, want)
			}
			script := `
try() { if (eval "$2") >/dev/null 2>&1; then echo "$1 yes"; else echo "$1 no"; fi; }
try create-inside 'echo x > "$IN/new"'
try mkdir-inside 'mkdir "$IN/dir"'
try devnull 'echo x > /dev/null'
try create-outside 'echo x > "$OUT/new"'
try append-outside 'echo x >> "$OUT/existing"'
try remove-outside 'rm -f "$OUT/existing"'
try mkdir-outside 'mkdir "$OUT/dir"'
try link-outside 'ln -s /etc/passwd "$OUT/link"'
try move-out 'mv "$IN/new" "$OUT/moved"'
`
			out, code := run(t, b, inside, script, "IN="+inside, "OUT="+outside)
			want := "create-inside yes\nmkdir-inside yes\ndevnull yes\ncreate-outside no\nappend-outside no\nremove-outside no\nmkdir-outside no\nlink-outside no\nmove-out no\n"
			if out != want || code != 0 {
				t.Errorf("exit code %d, output:\n%s\nwant:\n%s", code, out, want)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("outside holds %d entries, want only the existing file", len(entries))
			}
		})
	}
}

// Landlock holds reads too: the agent reads and runs the system's directories, its own places, the extra
// read-only paths and its program's directory, and nothing else, however open the mode bits are (another
// user's home, other steps' temporary files, a socket under /run).
func TestLandlockConfinesReads(t *testing.T) {
	t.Parallel()
	for _, separate := range []bool{false, true} {
		t.Run(mode(separate), func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, separate)
			inside := openDir(t, uid)
			// Everyone may read these by the mode bits: only Landlock keeps the agent out, or lets it in.
			outside, tool, prog := openDir(t, -1), openDir(t, -1), openDir(t, -1)
			for _, f := range []string{filepath.Join(outside, "secret"), filepath.Join(tool, "lib")} {
				if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(prog, "agent"), []byte("#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(prog, "lib.sh"), []byte("echo agent ran\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			b := newBoundary(t, Config{Separate: separate, UID: uid, GID: uid, Writable: []string{inside}, ReadOnly: []string{tool}})
			needLandlock(t, b, 1)
			if got, want := b.Describe(), "reads confined to those places, /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt, /etc, /proc, /sys, "+tool+" and the directory of the program it runs"; !strings.Contains(got, want) {
				t.Errorf("Describe() = %q, want it to say %q", got, want)
			}
			script := `
try() { if (eval "$2") >/dev/null 2>&1; then echo "$1 yes"; else echo "$1 no"; fi; }
echo x > "$IN/mine"
try read-inside 'cat "$IN/mine"'
try read-etc 'cat /etc/passwd'
try run-usr 'ls /usr'
try read-tool 'cat "$TOOL/lib"'
try list-tool 'ls "$TOOL"'
try write-tool 'echo y > "$TOOL/new"'
try read-outside 'cat "$OUT/secret"'
try list-outside 'ls "$OUT"'
try list-tmp 'ls /tmp'
try list-run 'ls /run'
try list-var 'ls /var'
try list-root-home 'ls /root'
`
			out, code := run(t, b, inside, script, "IN="+inside, "OUT="+outside, "TOOL="+tool)
			want := "read-inside yes\nread-etc yes\nrun-usr yes\nread-tool yes\nlist-tool yes\nwrite-tool no\nread-outside no\nlist-outside no\nlist-tmp no\nlist-run no\nlist-var no\nlist-root-home no\n"
			if out != want || code != 0 {
				t.Errorf("exit code %d, output:\n%s\nwant:\n%s", code, out, want)
			}

			// The program it runs, outside every other place, may read what it ships beside it.
			cmd := b.Command(filepath.Join(prog, "agent"), nil)
			cmd.Dir, cmd.Env = inside, []string{"PATH=/usr/bin:/bin"}
			got, err := cmd.CombinedOutput()
			if err != nil || string(got) != "agent ran\n" {
				t.Errorf("the program beside its own files = %q, %v; want agent ran", got, err)
			}
		})
	}
}

// The agent's processes hold no capability, and can get none back: not from an exec (bounding and ambient
// sets empty), whatever ralph itself was given (NET_ADMIN in the Action, say).
func TestAgentHoldsNoCapabilities(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}})
	out, code := run(t, b, d, `grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status`)
	want := "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"
	if out != want || code != 0 {
		t.Errorf("exit code %d, the agent's capabilities:\n%s\nwant:\n%s", code, out, want)
	}
}

func TestLandlockScopesSignals(t *testing.T) {
	t.Parallel()
	d := openDir(t, -1)
	b := newBoundary(t, Config{Writable: []string{d}})
	needLandlock(t, b, 6)
	// A process outside the boundary, of the same user: ralph, on a laptop.
	outside := exec.Command("sleep", "300")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = outside.Process.Kill(); _ = outside.Wait() })
	out, code := run(t, b, d, `if kill -TERM "$PID" 2>/dev/null; then echo DONE; else echo denied; fi`,
		"PID="+strconv.Itoa(outside.Process.Pid))
	if out != "denied\n" || code != 0 {
		t.Errorf("output %q, exit code %d; want denied, 0", out, code)
	}
}

func TestRequireLandlock(t *testing.T) {
	t.Parallel()
	_, err := New(Config{RequireLandlock: true, Launcher: launcher, noLandlock: true})
	if err == nil || !strings.Contains(err.Error(), "landlock is required") {
		t.Errorf("New without Landlock = %v, want landlock is required", err)
	}
	var said []string
	b, err := New(Config{Launcher: launcher, noLandlock: true, Logf: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }})
	if err != nil || b.ABI() != 0 || len(said) != 1 || !strings.HasPrefix(said[0], "landlock: not available") {
		t.Errorf("New without Landlock, not required = %v, ABI %d, said %q", err, b.ABI(), said)
	}

	// The supervisor told to confine fails closed, before it starts the command, when it cannot.
	d := openDir(t, -1)
	marker := filepath.Join(d, "started")
	cmd := exec.Command(launcher, SupervisorCommand, "-landlock", "-writable", filepath.Join(d, "missing"), "--", "/bin/sh", "-c", `touch "$0"`, marker)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitSetup || !strings.Contains(string(out), "landlock") {
		t.Errorf("supervisor exit code %d, output %q; want %d and why", code, out, ExitSetup)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

func TestPrepareHidesRalphsEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode     string
		wantSeen bool
	}{
		{"no-prepare", true}, // the control: a same-user child reads a dumpable parent's environment
		{"prepare", false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			secret := fmt.Sprintf("s3cret-%d", time.Now().UnixNano())
			cmd := exec.Command(helper)
			cmd.Dir = "/"
			cmd.Env = []string{helperEnv + "=" + tt.mode, "PATH=/usr/bin:/bin", "RALPH_TEST_TOKEN=" + secret,
				`SCRIPT=tr '\0' '\n' < /proc/$PPID/environ | grep RALPH_TEST_TOKEN; exit 0`}
			if os.Geteuid() == 0 {
				// Root reads every process's environment: ralph and the agent are a user here.
				uid, gid := reservedIDs(t)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			if seen := strings.Contains(string(out), secret); seen != tt.wantSeen {
				t.Errorf("the child read the secret: %v, want %v (output %q)", seen, tt.wantSeen, out)
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		root    bool // the case needs root to get past the root check
		wantErr string
	}{
		{"runner's uid", Config{Separate: true, UID: 1001}, true, "agent uid 1001 is not allowed"},
		{"runner's gid", Config{Separate: true, GID: 1001}, true, "agent gid 1001 is not allowed"},
		{"negative uid", Config{Separate: true, UID: -5}, true, "agent uid -5 is not allowed"},
		// Its reaper's uid would be a real user's.
		{"uid below the agents' range", Config{Separate: true, UID: 5000}, true, "agent uid 5000 is not allowed (it must be within 61000 and 64999)"},
		{"uid above the agents' range", Config{Separate: true, UID: 65000}, true, "agent uid 65000 is not allowed"},
		{"relative writable", Config{Writable: []string{"repo"}}, false, `writable directory "repo" is not an absolute path`},
		{"same user", Config{Writable: []string{"/w/"}}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t)
			}
			tt.cfg.Launcher = launcher
			_, err := New(tt.cfg)
			if got := fmt.Sprint(err); tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(got, tt.wantErr) {
				t.Errorf("New = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if os.Geteuid() != 0 {
		if _, err := New(Config{Separate: true, Launcher: launcher}); err == nil || !strings.Contains(err.Error(), "root") {
			t.Errorf("New(Separate) as a user = %v, want it to need root", err)
		}
	}
}

func TestCommandArgv(t *testing.T) {
	t.Parallel()
	b := &Boundary{separate: true, uid: 61000, gid: 61001, nproc: 4096, writable: []string{"/w", "/h"}, launcher: "/bin/ralph", abi: 7}
	cmd := b.Command("/usr/bin/claude", []string{"-p", "--", "x"})
	want := []string{"/bin/ralph", SupervisorCommand, "-separate", "-uid", "61000", "-gid", "61001", "-nproc", "4096", "-landlock",
		"-writable", "/w", "-writable", "/h", "--", "/usr/bin/claude", "-p", "--", "x"}
	if diff := cmp.Diff(want, cmd.Args); diff != "" || cmd.Path != "/bin/ralph" {
		t.Errorf("Command %s (-want +got):\n%s", cmd.Path, diff)
	}
	got, err := parseSpec(cmd.Args[2:])
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := spec{separate: true, uid: 61000, gid: 61001, nproc: 4096, landlock: true, writable: []string{"/w", "/h"},
		program: "/usr/bin/claude", args: []string{"-p", "--", "x"}}
	if diff := cmp.Diff(wantSpec, got, cmp.AllowUnexported(spec{})); diff != "" {
		t.Errorf("parseSpec (-want +got):\n%s", diff)
	}
}

// TestNoDescriptorReachesTheAgent: a descriptor ralph holds open without close-on-exec (one it inherited
// from whatever started it: a shell's `exec 3<file`, a runner's) does not reach the agent, which could
// read through it what its uid may not open. Not parallel: the descriptor is open in the test process,
// where every command any test starts would inherit it.
func TestNoDescriptorReachesTheAgent(t *testing.T) {
	secret := filepath.Join(openDir(t, 0), "secret")
	if err := os.WriteFile(secret, []byte("ralph's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, separate := range []bool{false, true} {
		t.Run(mode(separate), func(t *testing.T) {
			uid := agentUID(t, separate)
			d := openDir(t, uid)
			b := newBoundary(t, Config{Separate: separate, UID: uid, GID: uid, Writable: []string{d}})
			// Opened here, for each: one agent's read would leave the next at the end of the file.
			f, err := os.Open(secret)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				t.Fatal(err)
			}
			out, _ := run(t, b, d, fmt.Sprintf(`ls /proc/self/fd; cat <&%d`, fd))
			if strings.Contains(out, "ralph's secret") {
				t.Errorf("the agent read ralph's descriptor %d:\n%s", fd, out)
			}
		})
	}
}

// ipcHelper makes what the kernel keeps after its maker exits: a System V shared memory segment, message
// queue and semaphore set. It prints what it could make.
func ipcHelper() int {
	if _, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o666); err == nil {
		fmt.Println("made shm")
	}
	if _, _, e := unix.Syscall(unix.SYS_MSGGET, unix.IPC_PRIVATE, unix.IPC_CREAT|0o666, 0); e == 0 {
		fmt.Println("made msg")
	}
	if _, _, e := unix.Syscall(unix.SYS_SEMGET, unix.IPC_PRIVATE, 1, unix.IPC_CREAT|0o666); e == 0 {
		fmt.Println("made sem")
	}
	return 0
}

// ipcOf lists the System V IPC objects that uid owns or made, as /proc/sysvipc has them.
func ipcOf(t *testing.T, uid int) []string {
	t.Helper()
	var found []string
	for _, kind := range []string{"shm", "msg", "sem"} {
		b, err := os.ReadFile("/proc/sysvipc/" + kind)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		head := strings.Fields(lines[0])
		for _, line := range lines[1:] {
			f := strings.Fields(line)
			for i, h := range head {
				if (h == "uid" || h == "cuid") && i < len(f) && f[i] == strconv.Itoa(uid) {
					found = append(found, kind+": "+line)
					break
				}
			}
		}
	}
	return found
}

// TestNoIPCOutlivesTheAgent: the System V IPC objects (shared memory, message queues, semaphores) an agent
// of its own uid makes, which the kernel keeps after every process of it is gone (and Landlock does not
// confine), are removed with its processes: nothing of one agent is there for the next command, or the
// next issue's agent, which a sweep runs as the same uid.
func TestNoIPCOutlivesTheAgent(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, ReadOnly: []string{helper}})
	out, code := run(t, b, d, `"$HELPER"`, "HELPER="+helper, helperEnv+"=ipc")
	if code != 0 {
		t.Fatalf("exit code %d, output:\n%s", code, out)
	}
	t.Cleanup(func() {
		for _, line := range ipcOf(t, uid) {
			f := strings.Fields(strings.SplitN(line, ": ", 2)[1])
			id, _ := strconv.Atoi(f[1])
			switch {
			case strings.HasPrefix(line, "shm"):
				_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			case strings.HasPrefix(line, "msg"):
				_, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
			case strings.HasPrefix(line, "sem"):
				_, _, _ = unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
			}
		}
	})
	if !strings.Contains(out, "made shm") {
		t.Fatalf("the agent made no shared memory segment, output:\n%s", out)
	}
	if _, err := b.Reap(); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if left := ipcOf(t, uid); len(left) > 0 {
		t.Errorf("the agent's IPC objects outlive it:\n%s", strings.Join(left, "\n"))
	}
}

// TestNoKeyOutlivesTheAgent: the agent cannot use the kernel's keyrings, which are not the boundary's to
// confine: a key an agent of its own uid adds to its user keyring outlives every process of it (the
// kernel keeps a uid's keyring), for the uid's next command to find (a sweep's next issue runs as the same
// uid); as the same user, the user's own keyrings hold what the agent must not read. Docker's default
// seccomp profile refuses these calls too; ralph's supervisor refuses them wherever it runs.
func TestNoKeyOutlivesTheAgent(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	t.Cleanup(func() {
		cmd := exec.Command(helper)
		cmd.Env = []string{helperEnv + "=keyring-clear"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
		_ = cmd.Run()
	})
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, ReadOnly: []string{helper}})
	out, code := run(t, b, d, `"$HELPER"`, "HELPER="+helper, helperEnv+"=keyring-add")
	if code != 0 {
		t.Fatalf("exit code %d, output:\n%s", code, out)
	}
	if _, err := b.Reap(); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	found, _ := run(t, b, d, `"$HELPER"`, "HELPER="+helper, helperEnv+"=keyring-find")
	if strings.Contains(found, "found") {
		t.Errorf("the agent's key outlives it: the first command said %q, the next one %q", strings.TrimSpace(out), strings.TrimSpace(found))
	}
}

// mqueueName is the POSIX message queue the tests' agents make, as mq_open(2) takes it (glibc's "/" cut).
const mqueueName = "ralph-test-left"

// mqueueHelper makes (create) or opens a POSIX message queue and says what it could: one made holds a
// message, which the kernel keeps, with the queue, after every process of the maker is gone.
func mqueueHelper(create bool) int {
	name, err := unix.BytePtrFromString(mqueueName)
	if err != nil {
		return 2
	}
	flags := unix.O_RDWR | unix.O_NONBLOCK
	if create {
		flags |= unix.O_CREAT
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), uintptr(flags), 0o666, 0, 0, 0)
	if e != 0 {
		fmt.Println("mq_open:", e)
		return 0
	}
	msg := []byte("left behind")
	if create {
		if _, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDSEND, fd, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)), 0, 0, 0); e != 0 {
			fmt.Println("mq_timedsend:", e)
			return 0
		}
		fmt.Println("made")
		return 0
	}
	buf := make([]byte, 1<<16)
	n, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDRECEIVE, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	if e != 0 {
		fmt.Println("found, mq_timedreceive:", e)
		return 0
	}
	fmt.Printf("found %q\n", buf[:n])
	return 0
}

// TestNoMessageQueueOutlivesTheAgent: the agent cannot use POSIX message queues, which the kernel keeps,
// with their messages, after every process of their maker is gone, for the uid's next command to open (a
// sweep's next issue runs as the same uid; on a laptop, the user's own programs). Landlock refuses
// mq_open(2) as a write outside the agent's places, but a kernel without Landlock does not, and where
// /dev/mqueue is not mounted (Docker's default) no one can list the queues to remove them; ralph's
// supervisor refuses mq_open wherever it runs.
func TestNoMessageQueueOutlivesTheAgent(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	t.Cleanup(func() {
		if name, err := unix.BytePtrFromString(mqueueName); err == nil {
			_, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0)
		}
	})
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, noLandlock: true})
	out, code := run(t, b, d, `"$HELPER"`, "HELPER="+helper, helperEnv+"=mqueue-make")
	if code != 0 {
		t.Fatalf("exit code %d, output:\n%s", code, out)
	}
	if _, err := b.Reap(); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	found, _ := run(t, b, d, `"$HELPER"`, "HELPER="+helper, helperEnv+"=mqueue-find")
	if strings.Contains(found, "found") {
		t.Errorf("the agent's message queue outlives it: the first command said %q, the next one %q", strings.TrimSpace(out), strings.TrimSpace(found))
	}
}

// ownedBy lists what uid owns under the directories given (their entries, at any depth; links not
// followed), as a scan of the machine for the agent's uid after a step would find it.
func ownedBy(uid int, dirs ...string) []string {
	var found []string
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
					found = append(found, p)
				}
			}
			return nil
		})
	}
	return found
}

// TestNoFileOutlivesTheAgent: what an agent of its own uid writes where everyone may write (/tmp,
// /var/tmp, /dev/shm, /run/lock, a directory anyone may write within them), which a kernel without
// Landlock lets it, is removed with its processes: nothing there is left, readable or runnable (a setuid
// file, a FIFO, a directory it closed), for the uid's next command (a sweep's next issue runs as the same
// uid), for a later run's agent on the same machine, or for anyone else.
func TestNoFileOutlivesTheAgent(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	// A directory anyone may write, of another user's, within the system's temporary directory.
	shared := openDir(t, -1)
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	places := []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}
	if tmp := os.TempDir(); !slices.Contains(places, tmp) {
		places = append(places, tmp)
	}
	// Its own place, which is ralph's to remove (the workspace), is not what this test looks for.
	notOwn := func(paths []string) []string {
		return slices.DeleteFunc(paths, func(p string) bool { return p == d || strings.HasPrefix(p, d+"/") })
	}
	t.Cleanup(func() {
		for _, p := range notOwn(ownedBy(uid, places...)) {
			_ = os.Chmod(p, 0o700)
			_ = os.RemoveAll(p)
		}
	})
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, noLandlock: true})
	script := `
for dir in /tmp /var/tmp /dev/shm /run/lock "$SHARED"; do
	[ -d "$dir" ] || continue
	echo "left behind" > "$dir/ralph-left-$UID" && chmod 666 "$dir/ralph-left-$UID" && echo "wrote $dir"
done
cp /bin/true "/tmp/ralph-left-suid-$UID" && chmod 4755 "/tmp/ralph-left-suid-$UID"
mkfifo "/tmp/ralph-left-fifo-$UID"
mkdir -p "/tmp/ralph-left-dir-$UID/deep/er" && echo x > "/tmp/ralph-left-dir-$UID/deep/er/f" && chmod 0 "/tmp/ralph-left-dir-$UID/deep" "/tmp/ralph-left-dir-$UID"
ln -s /etc/passwd "/dev/shm/ralph-left-link-$UID"
`
	out, code := run(t, b, d, script, "UID="+strconv.Itoa(uid), "SHARED="+shared)
	if code != 0 || !strings.Contains(out, "wrote /tmp") || !strings.Contains(out, "wrote "+shared) {
		t.Fatalf("exit code %d, the agent could not write where anyone may; output:\n%s", code, out)
	}
	if _, err := b.Reap(); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if left := notOwn(ownedBy(uid, places...)); len(left) > 0 {
		t.Errorf("what the agent wrote outlives it:\n%s", strings.Join(left, "\n"))
	}
	// Only the agent's, and not its places: the shared directory and the agent's writable one stay.
	for _, dir := range []string{shared, d} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s went too: %v", dir, err)
		}
	}
}
