package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid int
	state     byte
	start     uint64 // start time since boot: with pid, it names one process even after the pid is reused
	uids      [3]int // real, effective, saved
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' }

// readProc reads one process; withUIDs also reads its uids, which costs a second file.
func readProc(pid int, withUIDs bool) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	// The command name, in parentheses, may itself hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	p := proc{pid: pid, state: f[0][0]}
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: ppid: %w", pid, err)
	}
	if p.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	if !withUIDs {
		return p, nil
	}
	s, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return proc{}, err
	}
	for _, line := range strings.Split(string(s), "\n") {
		rest, ok := strings.CutPrefix(line, "Uid:")
		if !ok {
			continue
		}
		u := strings.Fields(rest)
		if len(u) < 3 {
			return proc{}, fmt.Errorf("/proc/%d/status: Uid: %q", pid, rest)
		}
		for k := range 3 {
			if p.uids[k], err = strconv.Atoi(u[k]); err != nil {
				return proc{}, fmt.Errorf("/proc/%d/status: Uid: %w", pid, err)
			}
		}
		return p, nil
	}
	return proc{}, fmt.Errorf("/proc/%d/status: no Uid line", pid)
}

// readProcs reads every process; the ones that end while it reads are left out.
func readProcs(withUIDs bool) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var procs []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := readProc(pid, withUIDs)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// target is what a sweep kills: the descendants of root (when not 0), and every process with uid as its
// real, effective or saved uid (when not -1). Never the sweeping process itself.
type target struct {
	root int
	uid  int
}

func (t target) pick(procs []proc, self int) []proc {
	var picked []proc
	in := map[int]bool{}
	add := func(p proc) {
		if p.pid != self && !in[p.pid] {
			in[p.pid] = true
			picked = append(picked, p)
		}
	}
	if t.root != 0 {
		children := map[int][]proc{}
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p)
		}
		queue := []int{t.root}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			for _, c := range children[pid] {
				if !in[c.pid] {
					add(c)
					queue = append(queue, c.pid)
				}
			}
		}
	}
	if t.uid >= 0 {
		for _, p := range procs {
			if p.uids[0] == t.uid || p.uids[1] == t.uid || p.uids[2] == t.uid {
				add(p)
			}
		}
	}
	return picked
}

// sweep kills what t picks until a look at /proc finds none of it running, and reaps those that are this
// process's children: the ones it killed with a blocking wait, zombies with WNOHANG. It waits on those pids
// only, never on any child (-1), whose status belongs to whoever started it. Processes that keep appearing
// for longer than limit are an error.
func sweep(t target, limit time.Duration) (killed int, err error) {
	self := os.Getpid()
	done := map[[2]uint64]bool{}
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for {
		procs, err := readProcs(t.uid >= 0)
		if err != nil {
			return len(done), err
		}
		running := 0
		for _, p := range t.pick(procs, self) {
			if p.dead() {
				if p.ppid == self {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
				}
				continue
			}
			running++
			if kill(p) != nil {
				continue
			}
			done[[2]uint64{uint64(p.pid), p.start}] = true
			if p.ppid == self {
				// SIGKILL always ends it; its pid is free once it is waited for.
				var ws unix.WaitStatus
				_, _ = unix.Wait4(p.pid, &ws, 0, nil)
			}
		}
		if running == 0 {
			return len(done), nil
		}
		if time.Now().After(deadline) {
			return len(done), fmt.Errorf("%d processes of the agent still running after %s of killing them", running, limit)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// errGone is a process that ended, and whose pid may be another's now.
var errGone = errors.New("process gone")

// kill sends SIGKILL to p, and only to p: through a pidfd, checked to be the process listed (same start
// time), so that a pid reused since the listing is never killed.
func kill(p proc) error {
	fd, ferr := unix.PidfdOpen(p.pid, 0)
	if errors.Is(ferr, unix.ESRCH) {
		return errGone
	}
	if ferr == nil {
		defer unix.Close(fd)
	}
	if q, err := readProc(p.pid, false); err != nil || q.start != p.start {
		return errGone
	}
	if ferr != nil {
		// No pidfd here (an old kernel, a seccomp profile): a pid reused in the last moment is a risk left.
		return unix.Kill(p.pid, unix.SIGKILL)
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}
