package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid int
	state     byte
	start     uint64 // start time since boot (readProc): with pid, it names one process even after the pid is reused
	uids      [3]int // real, effective, saved (readStatus)
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' }

// readProc reads one process's state, parent and start time from its stat file.
func readProc(pid int) (proc, error) {
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
	return p, nil
}

// readStatus reads one process's state, parent and uids from its status file (not its start time).
func readStatus(pid int) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return proc{}, err
	}
	p, seen := proc{pid: pid}, 0
	for _, line := range strings.Split(string(b), "\n") {
		key, value, _ := strings.Cut(line, ":")
		f := strings.Fields(value)
		switch {
		case key == "State" && len(f) > 0:
			p.state, seen = f[0][0], seen+1
		case key == "PPid" && len(f) > 0:
			if p.ppid, err = strconv.Atoi(f[0]); err != nil {
				return proc{}, fmt.Errorf("/proc/%d/status: PPid: %w", pid, err)
			}
			seen++
		case key == "Uid" && len(f) >= 3:
			for k := range 3 {
				if p.uids[k], err = strconv.Atoi(f[k]); err != nil {
					return proc{}, fmt.Errorf("/proc/%d/status: Uid: %w", pid, err)
				}
			}
			seen++
		}
		if seen == 3 {
			return p, nil
		}
	}
	return proc{}, fmt.Errorf("/proc/%d/status: no State, PPid and Uid lines", pid)
}

// quietPasses is how many passes in a row must find nothing of the agent's tree before it is taken to be
// gone: one pass may read a children list while a process is being re-parented. uidQuietPasses is the
// same for a uid, whose processes are all killed at once by each pass, and only have to be seen gone.
const (
	quietPasses    = 3
	uidQuietPasses = 2
)

// killUID kills every process of uid, the agent's, and returns once none is left, not even a zombie
// (reap, called after every pass, waits for the ones that are this process's children), with how many it
// found running. It kills from a thread of this process (root) that is not the main thread, whose
// credentials are the process's to kill(2) and in /proc; see killAs. With shared, it then removes what
// uid left there (removeFiles).
func killUID(uid, reaper int, reap func(), limit time.Duration, shared *sharedPlaces) (found int, err error) {
	type result struct {
		found int
		err   error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The main thread: another thread does it, while this one, held here, cannot run its
			// goroutine.
			found, err := killUID(uid, reaper, reap, limit, shared)
			runtime.UnlockOSThread()
			done <- result{found, err}
			return
		}
		// Never unlocked: should killAs fail to make it root again, the thread ends with this goroutine.
		found, err := killAs(uid, reaper, reap, limit, shared)
		done <- result{found, err}
	}()
	r := <-done
	return r.found, r.err
}

// killAs kills every process of uid from the calling thread, which must be locked to its goroutine and
// root, and returns how many it found running. It takes uid as its effective uid and reaper as its real
// uid, and calls kill(-1, SIGKILL) until uidQuietPasses looks at /proc in a row find no process of uid but
// zombies it cannot reap, and then makes the thread root again. kill(-1) sends the signal to every process
// the caller may signal but its own, all at once: no fork slips between, as a fork whose parent has
// SIGKILL pending fails, and only root makes a process of uid otherwise. The effective uid makes every
// process of uid one the thread may signal; the real uid, one that no process has, makes the thread one
// that no process of uid may signal (tgkill) or trace, and the saved uid 0 lets it become root again.
// The looks at /proc are needed because kill(-1) succeeds whenever another process exists, even one it
// may not signal. It returns an error when processes of uid are still there after limit. Once none is
// left, it removes the uid's System V IPC objects and, with shared, its files there (removeFiles).
func killAs(uid, reaper int, reap func(), limit time.Duration, shared *sharedPlaces) (found int, err error) {
	if uid <= 0 || reaper <= 0 || uid == reaper {
		return 0, fmt.Errorf("kill the processes of uid %d as uid %d: not allowed", uid, reaper)
	}
	// setresuid(2) itself changes only this thread: Go's Setresuid would change them all.
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(reaper), uintptr(uid), 0); e != 0 {
		return 0, fmt.Errorf("kill the processes of uid %d: setresuid: %w", uid, e)
	}
	defer func() {
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, 0, 0, 0); e != 0 && err == nil {
			err = fmt.Errorf("become root again after killing the processes of uid %d: %w", uid, e)
		}
	}()
	deadline := time.Now().Add(limit)
	pause := 100 * time.Microsecond
	for pass, quiet := 0, 0; ; pass++ {
		left, err := liveOf(uid)
		if err != nil {
			return found, fmt.Errorf("kill the processes of uid %d: %w", uid, err)
		}
		if pass == 0 {
			found = left
		}
		if left == 0 {
			if quiet++; quiet == uidQuietPasses {
				if err := removeIPC(uid); err != nil {
					return found, err
				}
				return found, removeFiles(uid, shared)
			}
		} else {
			quiet = 0
		}
		// ESRCH: no process but this one and the namespace's first (which kill(-1) never signals), as in
		// a container where ralph is the first process: nothing to kill.
		if err := unix.Kill(-1, unix.SIGKILL); err != nil && err != unix.ESRCH {
			return found, fmt.Errorf("kill the processes of uid %d: %w", uid, err)
		}
		reap()
		if left == 0 {
			continue
		}
		if time.Now().After(deadline) {
			return found, fmt.Errorf("%d processes of uid %d still there after %s of killing them", left, uid, limit)
		}
		// Killed processes take a moment to exit.
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// removeIPC removes the System V IPC objects (shared memory segments, message queues, semaphore sets)
// that uid owns or made, which the kernel keeps after every process of uid is gone and Landlock does not
// confine: nothing of one agent is left for the next command of the uid (a sweep's next issue runs as the
// same uid). It runs on killAs's thread, whose effective uid is uid: the owner or maker may remove an
// object, where root in a container (no CAP_SYS_ADMIN) may not. A kernel without System V IPC has none.
func removeIPC(uid int) error {
	for _, kind := range []struct {
		file string
		rmid func(id int) unix.Errno
	}{
		{"shm", func(id int) unix.Errno {
			_, _, e := unix.RawSyscall(unix.SYS_SHMCTL, uintptr(id), unix.IPC_RMID, 0)
			return e
		}},
		{"msg", func(id int) unix.Errno {
			_, _, e := unix.RawSyscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
			return e
		}},
		{"sem", func(id int) unix.Errno {
			_, _, e := unix.RawSyscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
			return e
		}},
	} {
		b, err := os.ReadFile("/proc/sysvipc/" + kind.file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("remove the IPC objects of uid %d: %w", uid, err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		col := map[string]int{}
		for i, h := range strings.Fields(lines[0]) {
			col[h] = i
		}
		idCol, uidCol, cuidCol := col[kind.file+"id"], col["uid"], col["cuid"]
		if kind.file == "msg" {
			idCol = col["msqid"]
		}
		if idCol == 0 || uidCol == 0 || cuidCol == 0 {
			return fmt.Errorf("remove the IPC objects of uid %d: /proc/sysvipc/%s: unexpected columns %q", uid, kind.file, lines[0])
		}
		for _, line := range lines[1:] {
			f := strings.Fields(line)
			if len(f) <= max(idCol, uidCol, cuidCol) || f[uidCol] != strconv.Itoa(uid) && f[cuidCol] != strconv.Itoa(uid) {
				continue
			}
			id, err := strconv.Atoi(f[idCol])
			if err != nil {
				return fmt.Errorf("remove the IPC objects of uid %d: /proc/sysvipc/%s: %q", uid, kind.file, line)
			}
			if e := kind.rmid(id); e != 0 && e != unix.EINVAL && e != unix.EIDRM {
				return fmt.Errorf("remove the IPC objects of uid %d: %s %d: %w", uid, kind.file, id, e)
			}
		}
	}
	return nil
}

// sharedPlaces are the directories where every user may make files, to be rid of what the agent's uid
// left there (removeFiles), and the ones the agent may write by its boundary, which are left alone: its
// own places (the workspace removes them) and those ralph's configuration shares between steps.
type sharedPlaces struct {
	places, keep []string
}

// worldWritable are the directories where every user may make files on a Linux system (the Filesystem
// Hierarchy Standard's, POSIX shared memory's and message queues'), and ralph's TMPDIR.
func worldWritable() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/dev/mqueue", os.TempDir()}
}

// removeFiles removes what uid owns in the shared places, and in every directory within them that every
// user may write, whatever it is (a file, a directory of any depth and mode, a FIFO, a socket, a link, a
// setuid program), which Landlock, where the kernel has it, keeps the agent from making, and nothing
// else would remove: no file of one agent is left there for the uid's next command (a sweep's next issue
// runs as the same uid), a later run's agent or anyone else. It runs on killAs's thread once no process
// of uid is left, whose effective uid, and so its file system uid, is uid: it lists only what uid may
// list, and removes only what uid itself may remove, whatever a path turns out to be. With shared nil,
// it does nothing.
func removeFiles(uid int, shared *sharedPlaces) error {
	if shared == nil {
		return nil
	}
	// The places are walked as their real paths, so the kept ones are compared as theirs.
	keep := make([]string, 0, len(shared.keep))
	for _, k := range shared.keep {
		if real, err := filepath.EvalSymlinks(k); err == nil {
			k = real
		}
		keep = append(keep, k)
	}
	kept := func(p string) bool {
		for _, k := range keep {
			if within(p, k) || within(k, p) {
				return true
			}
		}
		return false
	}
	var errs []error
	seen := map[string]bool{}
	for _, place := range shared.places {
		real, err := filepath.EvalSymlinks(place)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		dirs := []string{real}
		for len(dirs) > 0 {
			dir := dirs[len(dirs)-1]
			dirs = dirs[:len(dirs)-1]
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue // one uid may not list, which it could not have written in either
			}
			for _, e := range entries {
				p := filepath.Join(dir, e.Name())
				info, err := os.Lstat(p)
				if err != nil || kept(p) {
					continue
				}
				st, ok := info.Sys().(*syscall.Stat_t)
				switch {
				case !ok:
				case int(st.Uid) == uid:
					if err := removeTree(p); err != nil {
						errs = append(errs, err)
					}
				case info.IsDir() && info.Mode().Perm()&0o002 != 0:
					dirs = append(dirs, p)
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove the files of uid %d where everyone may write: %w", uid, err)
	}
	return nil
}

// removeTree removes path and all it holds, opening the directories its owner closed.
func removeTree(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// within says whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// liveOf is how many processes of uid (real, effective or saved) there are but zombies that are not this
// process's children: those are not running, and their parent's to wait for. This process's own zombie
// children count, for its reap to wait for. This process itself does not count, whose thread may be
// killing them. A process that ends while it is read is left out.
func liveOf(uid int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	self, n := os.Getpid(), 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		p, err := readStatus(pid)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if (p.uids[0] == uid || p.uids[1] == uid || p.uids[2] == uid) && (!p.dead() || p.ppid == self) {
			n++
		}
	}
	return n, nil
}

// killTree kills every process descended from this one, which must be a child subreaper (an orphan of
// its descendants, a double fork or a setsid, comes back to it as its child), and returns once none is
// left: reap, called after every pass, waits for the zombies among its children. Each pass reads the
// tree through the children lists, which is quick enough to find a process that forks and exits, again
// and again, before its next hop: when it forks after its SIGKILL, the fork fails; when before, its
// child comes back here and the next pass finds it. It returns an error when descendants keep appearing
// for longer than limit.
func killTree(reap func(), limit time.Duration) (killed int, err error) {
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	pause := 50 * time.Microsecond
	for quiet := 0; quiet < quietPasses; {
		reap()
		live := descendants(self)
		for _, p := range live {
			if kill(p) == nil {
				killed++
			}
		}
		if len(live) == 0 {
			quiet++
			time.Sleep(100 * time.Microsecond)
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			return killed, fmt.Errorf("%d processes of the agent still running after %s of killing them", len(live), limit)
		}
		// Give the kernel a moment to finish the kills, less when there is more to do.
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
	return killed, nil
}

// descendants is the live processes descended from root, as the children lists of its threads and theirs
// show them (zombies left out). A process that ends while it is read is left out.
func descendants(root int) []proc {
	var live []proc
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children(pid) {
			if seen[c] {
				continue
			}
			seen[c] = true
			p, err := readProc(c)
			if err != nil || p.dead() {
				continue
			}
			live = append(live, p)
			queue = append(queue, c)
		}
	}
	return live
}

// children is the pids of pid's children, zombies included, from /proc/<pid>/task/*/children: an orphan
// is given to one of its new parent's threads.
func children(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var pids []int
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				pids = append(pids, c)
			}
		}
	}
	return pids
}

// reapAll waits for every child of this process that has ended. Only a process whose children are all
// the agent's (the supervisor, once the command's own wait returned) may call it: it takes their exit
// statuses from whoever else would wait for them.
func reapAll() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// reapChildren waits for the children of this process that are zombies and that of picks, by their pid
// only, never any child (-1): ralph's other children are its own to wait for.
func reapChildren(of func(proc) bool) {
	self := os.Getpid()
	for _, c := range children(self) {
		p, err := readStatus(c)
		if err != nil || !p.dead() || p.ppid != self || !of(p) {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
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
	if q, err := readProc(p.pid); err != nil || q.start != p.start {
		return errGone
	}
	if ferr != nil {
		// No pidfd here (an old kernel, a seccomp profile): a pid reused in the last moment is a risk left.
		return unix.Kill(p.pid, unix.SIGKILL)
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}
