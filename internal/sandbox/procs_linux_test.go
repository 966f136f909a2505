package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The hostile agents here try to outlive their step: a pid hopper, which forks a child in a session of its
// own and exits, again and again, so that no look at /proc finds the process it saw a moment ago; and a fork
// bomb. Every process of the hopper runs a copy of sh named for the test, so that even its zombies, whose
// command line is empty, are found by name.

// hopperScript starts a pid hopper and ends the agent once it has hopped a while. Each hop records its pid
// in $D/trail and stops when $D/stop exists, which only the test's cleanup creates. $HOPPER says which:
// "sh", a shell that starts the next hop (fork and exec), or "python", which only forks, and so hops
// several times faster.
const hopperScript = `
hop='[ -e "$D/stop" ] && exit 0; echo $$ >> "$D/trail"; setsid "$D/$NAME" -c "$hop" </dev/null >/dev/null 2>&1 & exit 0'
export hop
case "$HOPPER" in
sh) setsid "$D/$NAME" -c "$hop" </dev/null >/dev/null 2>&1 & ;;
python) setsid /usr/bin/python3 "$D/hop.py" "$D" "$NAME" </dev/null >/dev/null 2>&1 & ;;
esac
while [ "$(wc -l < "$D/trail" 2>/dev/null || echo 0)" -lt 50 ]; do sleep 0.01; done
touch "$D/ready"
`

// hopPy is the python hopper: it takes the test's name for its processes (prctl PR_SET_NAME), then forks,
// lets the parent exit, and starts a session, over and over.
const hopPy = `import ctypes, os, sys
d, name = sys.argv[1], sys.argv[2]
ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)
while not os.path.exists(d + "/stop"):
    if os.fork():
        os._exit(0)
    os.setsid()
    with open(d + "/trail", "a") as f:
        f.write("%d\n" % os.getpid())
`

// hopperDir is the directory a hopper runs in, with its programs; name is the command name every process
// of the hopper has, zombies included.
func hopperDir(t *testing.T, uid int, hopper string) (dir, name string) {
	t.Helper()
	if hopper == "python" {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("needs /usr/bin/python3 for the python hopper")
		}
	}
	dir = openDir(t, uid)
	name = fmt.Sprintf("hop%d", time.Now().UnixNano()%1e9)
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), sh, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hop.py"), []byte(hopPy), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A hopper that escaped stops at its next hop.
		_ = os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if live, _ := named(name, dir); len(live) == 0 {
				return
			}
		}
	})
	return dir, name
}

// named is the processes whose command name is name or whose command line mentions marker: live ones, and
// zombies.
func named(name, marker string) (live, zombies []int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i, j := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if i < 0 || j < i || j+2 >= len(stat) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if string(stat[i+1:j]) != name && !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if stat[j+2] == 'Z' {
			zombies = append(zombies, pid)
		} else {
			live = append(live, pid)
		}
	}
	return live, zombies
}

// checkGone fails t unless no process of the hopper is left, live or zombie, within a moment: the kernel
// may still be finishing the last kills.
func checkGone(t *testing.T, name, marker string) {
	t.Helper()
	live, zombies := named(name, marker)
	for deadline := time.Now().Add(2 * time.Second); len(live)+len(zombies) > 0 && time.Now().Before(deadline); live, zombies = named(name, marker) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(live) > 0 {
		t.Errorf("the hopper's processes %v still run after the step", live)
	}
	if len(zombies) > 0 {
		p, _ := readProc(zombies[0])
		t.Errorf("the hopper left %d zombies (the first, %d, is %d's)", len(zombies), zombies[0], p.ppid)
	}
	b, _ := os.ReadFile(filepath.Join(marker, "trail"))
	if hops := strings.Count(string(b), "\n"); hops < 50 {
		t.Errorf("the hopper hopped %d times, want at least 50: it did not run as it should", hops)
	}
}

func TestNothingOfAPidHopperSurvives(t *testing.T) {
	t.Parallel()
	type mode struct {
		name     string
		separate bool
		// killed: the supervisor is killed (SIGKILL after ralph's grace period) and Reap, in a program
		// that called Prepare as ralph does, does the work.
		killed bool
	}
	modes := []mode{
		{"same user, supervisor cleans up", false, false},
		{"same user, supervisor killed, ralph the subreaper", false, true},
		{"another uid, supervisor cleans up", true, false},
		{"another uid, supervisor killed, ralph the subreaper", true, true},
	}
	var tests []struct {
		mode
		hopper string
	}
	for _, hopper := range []string{"sh", "python"} {
		for _, m := range modes {
			tests = append(tests, struct {
				mode
				hopper string
			}{m, hopper})
		}
	}
	for _, tt := range tests {
		t.Run(tt.hopper+" hopper, "+tt.name, func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, tt.separate)
			d, name := hopperDir(t, uid, tt.hopper)
			env := []string{"PATH=/usr/bin:/bin", "D=" + d, "NAME=" + name, "HOPPER=" + tt.hopper}
			switch {
			case !tt.killed:
				b := newBoundary(t, Config{Separate: tt.separate, UID: uid, GID: uid, Writable: []string{d}})
				out, code := run(t, b, d, hopperScript, env[1:]...)
				if code != 0 {
					t.Fatalf("exit code %d, output:\n%s", code, out)
				}
			default:
				// Prepare and ReapDescendants are for a whole program: a helper process is one. It kills the
				// supervisor's group as ralph does after the grace period, then calls Reap.
				cmd := exec.Command(helper)
				cmd.Env = append(env, helperEnv+"=reap", launcherEnv+"="+launcher, "SCRIPT="+hopperScript+"exec sleep 300\n")
				if tt.separate {
					cmd.Env = append(cmd.Env, "AGENT_UID="+strconv.Itoa(uid))
				}
				cmd.WaitDelay = 2 * time.Second
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("helper: %v\n%s", err, out)
				}
				if !strings.Contains(string(out), "zombies=0\n") {
					t.Errorf("helper said %q, want no zombie of the agent left its child", out)
				}
			}
			checkGone(t, name, d)
		})
	}
}

// A fork bomb of the agent's uid stops at the process cap, and nothing of it is left after the step.
func TestForkBombHitsTheCap(t *testing.T) {
	t.Parallel()
	uid := agentUID(t, true)
	d := openDir(t, uid)
	killMarked(t, d)
	const limit = 24
	b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}, ProcessLimit: limit})
	// 2^8 shells (the second argument only marks their command lines), bounded so that it stays harmless where there is no cap: each level forks two and
	// waits; the leaves sleep.
	script := `
bomb='if [ "$1" -gt 0 ]; then sh -c "$bomb" bomb $(($1-1)) "$2" & sh -c "$bomb" bomb $(($1-1)) "$2" & wait; else exec sleep 20; fi'
export bomb
setsid sh -c "$bomb" bomb 7 "$D" </dev/null >/dev/null 2>&1 &
exec sleep 2
`
	cmd := b.Command("/bin/sh", []string{"-c", script})
	cmd.Dir, cmd.Env = d, []string{"PATH=/usr/bin:/bin", "D=" + d}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	most := 0
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(20 * time.Millisecond):
			most = max(most, len(ofUID(uid)))
		}
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d, want the agent's 0", code)
	}
	if most > limit {
		t.Errorf("the agent's uid had %d processes at once, over the cap of %d", most, limit)
	}
	if most < limit/2 {
		t.Errorf("the agent's uid had at most %d processes: the bomb did not go off", most)
	}
	for _, p := range ofUID(uid) {
		t.Errorf("process %d of the agent's uid is left, state %c", p.pid, p.state)
	}
}

// ofUID is the processes whose real uid is uid, zombies included.
func ofUID(uid int) []proc {
	entries, _ := os.ReadDir("/proc")
	var procs []proc
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, err := readStatus(pid); err == nil && p.uids[0] == uid {
				procs = append(procs, p)
			}
		}
	}
	return procs
}

// The agent turns on whatever kills it: a loop that kills every process it may signal (kill -1) and every
// thread of every process on the machine, one by one (a thread's own credentials decide who may signal
// it). The thread that kills the agent's uid, in the supervisor and in ralph, is none of them: the
// supervisor reports the agent's end and nothing of the uid is left.
func TestAgentCannotStopItsKiller(t *testing.T) {
	t.Parallel()
	// The attacker kills the agent's script too, and it spares only itself.
	script := `
setsid sh -c ': > "$D/ready"; while :; do kill -9 -1; for t in /proc/[0-9]*/task/*; do [ "${t##*/}" = $$ ] || kill -9 "${t##*/}"; done; done 2>/dev/null' </dev/null >/dev/null 2>&1 &
while [ ! -e "$D/ready" ]; do sleep 0.01; done
sleep 0.3
`
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("supervisor killed %v", killed), func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, true)
			d := openDir(t, uid)
			killMarked(t, d)
			env := []string{"PATH=/usr/bin:/bin", "D=" + d}
			if !killed {
				b := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{d}})
				// The agent's own kill -1 may end its script first: SIGKILL, 128+9.
				if out, code := run(t, b, d, script, env[1:]...); code != 0 && code != 137 {
					t.Errorf("exit code %d, want the agent's (0, or 137 when it killed itself); output:\n%s", code, out)
				}
			} else {
				cmd := exec.Command(helper)
				cmd.Env = append(env, helperEnv+"=reap", launcherEnv+"="+launcher, "AGENT_UID="+strconv.Itoa(uid), "SCRIPT="+script+"exec sleep 300\n")
				cmd.WaitDelay = 2 * time.Second
				if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "zombies=0\n") {
					t.Errorf("helper: %v, said %q; want it alive, with no zombie left", err, out)
				}
			}
			if _, err := os.Stat(filepath.Join(d, "ready")); err != nil {
				t.Fatal("the attack never started")
			}
			if left := ofUID(uid); len(left) > 0 {
				t.Errorf("%d processes of the agent's uid are left", len(left))
			}
		})
	}
}
