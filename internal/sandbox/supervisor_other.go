//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// SocketFilterAvailable is false: seccomp is Linux's.
func SocketFilterAvailable() bool { return false }

// landlockABI is 0: Landlock is Linux's.
func landlockABI() (int, string) { return 0, "Landlock is Linux only" }

// Prepare does nothing here: no prctl outside Linux.
func Prepare() error { return nil }

// Reap does nothing here: without a subreaper, what the agent left is not ralph's to find.
func (b *Boundary) Reap() (killed int, err error) { return 0, nil }

// SupervisorMain runs the command and exits with its exit code; outside Linux it has nothing to confine it
// with, so it refuses a boundary that asks for it.
func SupervisorMain(args []string) int {
	s, err := parseSpec(args)
	if err == nil && (s.separate || s.landlock || s.landlockNet || s.filterSockets) {
		err = errors.New("another uid, Landlock and the socket filter need Linux")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph sandbox: %v\n", err)
		return ExitSetup
	}
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGTERM)
	cmd := exec.Command(s.program, s.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ralph sandbox: start %s: %v\n", s.program, err)
		if errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return ExitSetup
	}
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode()
}
