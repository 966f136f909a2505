package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// reapTimeout bounds how long processes of the agent may keep appearing while they are being killed
// (a fork bomb outrunning the kills) before that is an error.
const reapTimeout = 10 * time.Second

// landlockABI is the kernel's Landlock ABI version, or 0 and why there is none.
func landlockABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err != nil:
		return 0, fmt.Sprintf("landlock_create_ruleset: %v", err)
	case v < 1:
		return 0, fmt.Sprintf("landlock_create_ruleset reported ABI %d", v)
	}
	return v, ""
}

// Prepare protects ralph's own process from an agent that runs as the same user, and is called first in
// main for every command. Not dumpable: a same-uid process cannot read /proc/<ralph>/environ or mem, where
// ralph's tokens are, nor ptrace ralph. Child subreaper: what the agent leaves behind by double-forking or
// setsid comes back to ralph, which Reap can then find, instead of to init.
func Prepare() error {
	var errs []error
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err))
	}
	return errors.Join(errs...)
}

// Reap makes sure nothing of the agent is left once the supervised command has ended, which matters when
// the supervisor itself was killed (SIGKILL after the grace period) before it could clean up. Separate, it
// kills every process of the agent's uid (killUID) and waits for the ones that were left to this process,
// a child subreaper (Prepare), and then removes what the uid owns where everyone may write (removeFiles)
// but in its writable places; otherwise, with ReapDescendants, it kills every process descended from this
// one and waits for them. It is safe to call more than once. killed is how many it found running.
func (b *Boundary) Reap() (killed int, err error) {
	switch {
	case b.separate:
		ours := func(p proc) bool { return p.uids[0] == b.uid || p.uids[1] == b.uid || p.uids[2] == b.uid }
		return killUID(b.uid, b.reaper, func() { reapChildren(ours) }, reapTimeout, &sharedPlaces{places: worldWritable(), keep: b.writable})
	case b.reapDescendants:
		return killTree(func() { reapChildren(func(proc) bool { return true }) }, reapTimeout)
	}
	return 0, nil
}

// setProcessLimit caps the processes of this process's real uid, and of its children's, at n
// (RLIMIT_NPROC): root is never held to it, the agent's uid is, once the supervisor's child has switched
// to it.
func setProcessLimit(n int) error {
	return unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)})
}

// writeRights are the Landlock rights the boundary handles, at an ABI: everything that changes the
// filesystem. Reading and executing are not handled, so they stay allowed everywhere.
func writeRights(abi int) landlock.AccessFSSet {
	r := landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym)
	if abi >= 2 {
		r |= ll.AccessFSRefer // git renames its objects and lock files across directories
	}
	if abi >= 3 {
		r |= ll.AccessFSTruncate
	}
	return r
}

// readRights are the Landlock rights of reading and running files and listing directories.
const readRights = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSExecute)

// confine applies Landlock to this process, all its threads, and so to every process it starts: writes
// only under writable and to the devices; reads and runs only under writable, readable, the system
// directories (SystemReadable) and the devices; from ABI 6, no signals to and no abstract unix sockets of
// processes outside the domain (ralph, on a laptop); with net (ABI 4 and later), TCP connections only to
// the ports in connect, on any address (binding stays free: a test may serve on loopback).
func confine(abi int, writable, readable []string, net bool, connect []int) error {
	rights := writeRights(abi)
	all := rights | readRights
	var scoped landlock.ScopedSet
	if abi >= 6 {
		scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	}
	args := []any{all, scoped}
	if net {
		if abi < landlockNetABI {
			return fmt.Errorf("network rules need Landlock ABI %d, the kernel has %d", landlockNetABI, abi)
		}
		args = append(args, landlock.AccessNetSet(ll.AccessNetConnectTCP))
	}
	cfg, err := landlock.NewConfig(args...)
	if err != nil {
		return err
	}
	// The character devices every program may write, outside Writable (/dev/pts for the terminals it
	// opens with /dev/ptmx). Not /dev/shm: on a laptop it holds other programs' shared memory.
	devices := []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}
	rules := []landlock.Rule{
		landlock.PathAccess(rights&(ll.AccessFSWriteFile|ll.AccessFSTruncate)|readRights&ll.AccessFSReadFile, devices...).IgnoreIfMissing(),
		// Missing ones are left out: not every system has /lib64, a laptop has no /opt.
		landlock.PathAccess(readRights, SystemReadable()...).IgnoreIfMissing(),
	}
	for _, r := range readable {
		// A file takes no directory right (the kernel refuses the rule): a single program, a cache file.
		rr := readRights
		if fi, err := os.Stat(r); err == nil && !fi.IsDir() {
			rr &^= ll.AccessFSReadDir
		}
		rules = append(rules, landlock.PathAccess(rr, r).IgnoreIfMissing())
	}
	if len(writable) > 0 {
		rules = append(rules, landlock.PathAccess(all, writable...))
	}
	if net {
		for _, p := range connect {
			rules = append(rules, landlock.ConnectTCP(uint16(p)))
		}
	}
	return cfg.Restrict(rules...)
}

// closeRangeCloexec is close_range(2)'s CLOSE_RANGE_CLOEXEC (Linux 5.11), which x/sys/unix does not name.
const closeRangeCloexec = 1 << 2

// closeOnExec marks every descriptor above standard error close-on-exec, so that the command the
// supervisor starts gets its standard input, output and error and nothing else: not a descriptor ralph
// inherited from whatever started it (a shell's `exec 3<file`, a runner's), which the command could
// read or write whatever its uid may open.
func closeOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), closeRangeCloexec); err == nil {
		return nil
	}
	// An older kernel, or a seccomp profile without close_range: each open descriptor, as /proc lists it.
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("fd %d: %w", fd, err)
		}
	}
	return nil
}
