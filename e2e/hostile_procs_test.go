package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// hopperScript, run as `sh $RALPH_TEST_CONTROL/hopper TAG` by the agent or a verify command, starts pid
// hoppers: processes that fork, let the parent exit and start a session of their own, again and again, so
// that no look at /proc finds the process it saw a moment ago. One is a copy of sh named NAME-TAG's
// initial, the other (where /usr/bin/python3 is) python renamed the same with a p. Every hop appends its
// pid to trail-TAG and stops when the control directory holds stop (the test's cleanup). Once the step's
// process has ended (the agent's script, whose pid is in agent.pid; for verify, this script, the last of
// the command), each hop appends its pid to after-TAG too. The python hopper also leaves a bait in the
// agent's copy, bait-TAG.txt, and says in alive-when-read-TAG when it sees ralph open it. The control
// directory is in each hop's command line.
const hopperScript = `
ctl="$RALPH_TEST_CONTROL"; tag=$1; name=NAME$(printf %.1s "$tag")
owner=$$; if [ "$tag" = agent ]; then owner=$(cat "$ctl/agent.pid"); fi
cp /bin/sh "$TMPDIR/$name"
hop='[ -e "$1/stop" ] && exit 0; echo $$ >> "$1/trail-$2"; if [ ! -d "/proc/$3" ]; then echo $$ >> "$1/after-$2"; fi; setsid "$0" -c "$hop" "$0" "$1" "$2" "$3" </dev/null >/dev/null 2>&1 & exit 0'
export hop
setsid "$TMPDIR/$name" -c "$hop" "$TMPDIR/$name" "$ctl" "$tag" "$owner" </dev/null >/dev/null 2>&1 &
if [ -x /usr/bin/python3 ]; then
  setsid /usr/bin/python3 "$ctl/hop.py" "$ctl" "${name}p" "$tag" "$owner" </dev/null >/dev/null 2>&1 &
fi
while [ "$(wc -l < "$ctl/trail-$tag" 2>/dev/null || echo 0)" -lt 40 ]; do sleep 0.01; done
`

const hopPy = `import ctypes, os, sys
ctl, name, tag, owner = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, name.encode(), 0, 0, 0)
# The bait: a new file of the step's work, which ralph opens when it reads the work. A hopper that sees it
# opened (inotify: IN_OPEN | IN_ACCESS; the watch is shared by every fork) was alive when ralph read the work.
bait = "bait-%s.txt" % tag
with open(bait, "w") as f:
    f.write("bait\n")
watch = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(watch, bait.encode(), 0x20 | 0x01)
while not os.path.exists(ctl + "/stop"):
    if os.fork():
        os._exit(0)
    os.setsid()
    with open(ctl + "/trail-" + tag, "a") as f:
        f.write("%d\n" % os.getpid())
    try:
        if os.read(watch, 4096):
            with open(ctl + "/alive-when-read-" + tag, "a") as f:
                f.write("%d\n" % os.getpid())
    except BlockingIOError:
        pass
    if not os.path.exists("/proc/" + owner):
        with open(ctl + "/after-" + tag, "a") as f:
            f.write("%d\n" % os.getpid())
`

// hoppers writes the hopper's programs to e's control directory and returns the command names its
// processes have; the test's cleanup stops whatever of them escaped.
func (e *env) hoppers(t *testing.T) (names []string) {
	t.Helper()
	name := fmt.Sprintf("h%08d", time.Now().UnixNano()%1e8)
	e.setControl("hopper", strings.ReplaceAll(hopperScript, "NAME", name))
	e.setControl("hop.py", hopPy)
	t.Cleanup(func() {
		e.setControl("stop", "")
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if live, _ := leftovers(e.control, nil); len(live) == 0 {
				return
			}
		}
	})
	for _, tag := range []string{"a", "v"} {
		names = append(names, name+tag, name+tag+"p")
	}
	return names
}

// leftovers is the processes whose command line mentions marker or whose command name is one of names:
// running ones, and zombies.
func leftovers(marker string, names []string) (live, zombies []int) {
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		i, j := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if i < 0 || j < i || j+2 >= len(stat) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		comm := string(stat[i+1 : j])
		named := false
		for _, n := range names {
			named = named || comm == n
		}
		if !named && !bytes.Contains(cmdline, []byte(marker)) {
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

// pythonHoppers says whether the python hopper, which watches the bait, runs here.
func pythonHoppers() bool {
	_, err := os.Stat("/usr/bin/python3")
	return err == nil
}

// checkNoHopper fails t unless the hoppers of the agent and of verify ran, and nothing of them is left
// once ralph has exited: no process, no zombie, no late file pushed.
func (e *env) checkNoHopper(t *testing.T, names []string, files []string) {
	t.Helper()
	for _, tag := range []string{"agent", "verify"} {
		b, _ := os.ReadFile(filepath.Join(e.control, "trail-"+tag))
		if hops := strings.Count(string(b), "\n"); hops < 40 {
			t.Errorf("the %s's hoppers hopped %d times, want at least 40: they did not run as they should", tag, hops)
		}
	}
	// Right after ralph's exit: it waited for everything of the agent's before it read the work.
	if live, zombies := leftovers(e.control, names); len(live)+len(zombies) > 0 {
		t.Errorf("after ralph exited, the hoppers' processes %v still run and %d zombies of theirs are left", live, len(zombies))
	}
	// When ralph read the work (it opened the bait, a new file of the work), none of them was alive.
	for _, tag := range []string{"agent", "verify"} {
		if b, err := os.ReadFile(filepath.Join(e.control, "alive-when-read-"+tag)); err == nil {
			t.Errorf("the %s's hoppers %q were alive when ralph read the work", tag, strings.Fields(string(b)))
		} else if !slices.Contains(files, "bait-"+tag+".txt") && pythonHoppers() {
			t.Errorf("the %s's bait was not part of the work ralph read: %v", tag, files)
		}
	}
}

// SECURITY: nothing of the agent outlives its step, not even a pid hopper in sessions of its own, started
// by the agent or by a verify command: when ralph reads the work, and after it exits, no process of theirs
// runs and no zombie of theirs is left.
func TestHostilePidHopper(t *testing.T) {
	bothUsers(t, testHostilePidHopper)
}

func testHostilePidHopper(t *testing.T, as runAs) {
	e := newEnvAs(t, as, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n  timeout: 2m\n"+agentEnvYAML+
		"verify:\n  - sh \"$RALPH_TEST_CONTROL/hopper\" verify\nresearch: false\nreview: skip\n")
	names := e.hoppers(t)
	e.setControl("implement_extra", `sh "$RALPH_TEST_CONTROL/hopper" agent`)
	n, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	_, files := e.branch(branch1)
	e.checkNoHopper(t, names, files)
	if !hasAll(files, "feature-1.txt") {
		t.Errorf("the phase's work was not pushed: %v", files)
	}
	e.wantState(n, workflow.InProgress)
}

// The same hoppers through gh ralph advance: as the same user when not root, ralph and its supervisor,
// child subreapers, kill the agent's tree; as root, every process of the agent's uid.
func TestHostilePidHopperThroughCLI(t *testing.T) {
	bothUsers(t, testHostilePidHopperThroughCLI)
}

func testHostilePidHopperThroughCLI(t *testing.T, as runAs) {
	e := newCLIEnvAs(t, as, agentConfig(t)+"verify:\n  - sh \"$RALPH_TEST_CONTROL/hopper\" verify\nresearch: false\nreview: skip\n")
	names := e.hoppers(t)
	e.setControl("phases", "1")
	e.setControl("implement_extra", `sh "$RALPH_TEST_CONTROL/hopper" agent`)
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-progress"); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	_, files := e.branch(branch1)
	e.checkNoHopper(t, names, files)
	if !hasAll(files, "feature-1.txt") {
		t.Errorf("the phase's work was not pushed: %v", files)
	}
}
