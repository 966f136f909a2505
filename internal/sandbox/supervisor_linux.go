package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// SupervisorMain is the supervisor, the process Command starts: it confines itself, runs the command as
// its child, and once the command has ended kills everything it left before exiting with its exit code
// (128+n for signal n). It stays root when the command runs as another uid, so that the command can
// neither signal nor trace it. It returns ExitSetup when the boundary could not be set up, before the
// command started, and ExitCleanup when the command's processes could not all be killed.
func SupervisorMain(args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "ralph sandbox: "+format+"\n", a...)
		return code
	}
	s, err := parseSpec(args)
	if err != nil {
		return fail(ExitSetup, "%v", err)
	}
	// No new privileges and the parent-death signal are a thread's: the command is forked from this one.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_DUMPABLE): %v", err)
	}
	// Every orphan of the command (setsid, double fork) is re-parented here, where the sweep finds it.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	if s.landlock {
		abi, why := landlockABI()
		if abi == 0 {
			return fail(ExitSetup, "landlock: not available: %s", why)
		}
		if err := confine(abi, s.writable); err != nil {
			return fail(ExitSetup, "landlock: %v", err)
		}
	}
	// A setuid program (sudo, su) must not give the command back what the boundary took.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(ExitSetup, "prctl(PR_SET_NO_NEW_PRIVS): %v", err)
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

	t := target{root: os.Getpid(), uid: -1}
	if s.separate {
		t.uid = s.uid
	}
	if _, err := sweep(t, reapTimeout); err != nil {
		return fail(ExitCleanup, "%v", err)
	}
	return code
}
