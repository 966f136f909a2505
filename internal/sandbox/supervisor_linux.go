package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// programDir is the directory of the file program names (looked up on PATH, links followed), which the
// command may read and run: the agent's CLI and what it ships beside it. ok is false when there is none.
func programDir(program string) (string, bool) {
	path, err := exec.LookPath(program)
	if err != nil {
		return "", false
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return "", false
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", false
	}
	return filepath.Dir(path), true
}

// dropCapabilities empties this thread's bounding and ambient capability sets, which the command forked
// from it inherits. The thread keeps its effective set: it kills the command's processes afterwards.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	for c := 0; c < 64; c++ { // past the last the kernel knows, EINVAL
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	return nil
}

// SupervisorMain is the supervisor, the process Command starts: it confines itself, runs the command as
// its child, and once the command has ended kills everything it left and waits for all of it before
// exiting with its exit code (128+n for signal n): no process of the command, and no zombie, outlives it.
// It stays root when the command runs as another uid, so that the command can neither signal nor trace
// it, and caps the processes of that uid (RLIMIT_NPROC). It returns ExitSetup when the boundary could not
// be set up, before the command started, and ExitCleanup when the command's processes could not all be
// killed.
func SupervisorMain(args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "ralph sandbox: "+format+"\n", a...)
		return code
	}
	s, err := parseSpec(args)
	if err != nil {
		return fail(ExitSetup, "%v", err)
	}
	// The command gets standard input, output and error, and no other descriptor this process holds.
	if err := closeOnExec(); err != nil {
		return fail(ExitSetup, "closing inherited descriptors: %v", err)
	}
	// No new privileges, the parent-death signal and Landlock's domain are a thread's: the command is
	// forked from this one, and its processes are killed from it.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_DUMPABLE): %v", err)
	}
	// Every orphan of the command (setsid, double fork) is re-parented here, where killTree finds it and
	// reapAll waits for it.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	if s.home != "" {
		if !s.separate {
			return fail(ExitSetup, "-home without -separate")
		}
		if err := showHome(s.home, s.homeTools, s.writable); err != nil {
			return fail(ExitSetup, "the toolchains of %s: %v", s.home, err)
		}
	}
	if s.landlock {
		abi, why := landlockABI()
		if abi == 0 {
			return fail(ExitSetup, "landlock: not available: %s", why)
		}
		// The home's toolchains are shown to the agent to read and run: Landlock's read rules open them too.
		readable := append(append([]string(nil), s.readable...), s.homeTools...)
		if dir, ok := programDir(s.program); ok {
			readable = append(readable, dir)
		}
		if err := confine(abi, s.writable, readable, s.landlockNet, s.connect); err != nil {
			return fail(ExitSetup, "landlock: %v", err)
		}
	} else if s.landlockNet {
		return fail(ExitSetup, "landlock: network rules asked for without -landlock")
	}
	if s.separate {
		// Inherited by the command; root, this process, is not held to it. Counted per uid across the
		// machine, which is what a uid of the run's own wants: a fork bomb stops at the cap.
		if err := setProcessLimit(s.nproc); err != nil {
			return fail(ExitSetup, "setrlimit(RLIMIT_NPROC): %v", err)
		}
	}
	if s.separate {
		// The capabilities ralph was given (NET_ADMIN for the firewall, say) end here: the switch to the
		// agent's uid clears the command's effective and permitted sets, this clears what an exec could
		// give back (the bounding set) and what an exec keeps (the ambient set).
		if err := dropCapabilities(); err != nil {
			return fail(ExitSetup, "dropping capabilities: %v", err)
		}
	}
	// A setuid program (sudo, su) must not give the command back what the boundary took.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	// No kernel keyring and no POSIX message queue: a key or a queue would outlive the command.
	if err := refuseKept(); err != nil {
		return fail(ExitSetup, "keyring and message queue filter: %v", err)
	}
	// Last: from here on this thread, and the command forked from it, open no socket the filter refuses.
	if s.filterSockets {
		if err := filterSockets(); err != nil {
			return fail(ExitSetup, "socket filter: %v", err)
		}
	}
	// The process group gets SIGTERM and SIGINT; the command decides what to do with them, and this
	// process must outlive it to clean up. Notify rather than Ignore: an ignored signal stays ignored in
	// the command, a caught one is reset. Nothing reads the channel: Notify drops what does not fit.
	signal.Notify(make(chan os.Signal, 1), unix.SIGTERM, unix.SIGINT, unix.SIGHUP)

	cmd := exec.Command(s.program, s.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.separate {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		code := ExitSetup
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return fail(code, "start %s: %v", s.program, err)
	}
	_ = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}

	// The command's own status is taken: every child left is the command's, to kill and wait for.
	if s.separate {
		// From this thread, which started the command: Landlock's domain is a thread's, and one that
		// scopes signals lets a thread signal only its own domain and those nested in it.
		reaper, _ := reaperUID(s.uid)
		// Not the files the command left where everyone may write: Landlock, in force here when the
		// kernel has it, would refuse their removal; ralph's Reap, which follows, removes them.
		if _, err := killAs(s.uid, reaper, reapAll, reapTimeout, nil); err != nil {
			return fail(ExitCleanup, "%v", err)
		}
	}
	if _, err := killTree(reapAll, reapTimeout); err != nil {
		return fail(ExitCleanup, "%v", err)
	}
	return code
}
