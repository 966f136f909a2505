// Command peakrss runs a command and writes its peak resident memory, in KiB, to the file $PEAKRSS_OUT, for
// the end-to-end tests that bound ralph's memory. The test cannot read it from its own wait: the kernel counts
// in a process's peak the memory of the process that started it, as it was when the command was exec'd, and the
// test binary is far larger than ralph. Started from this small program, ralph's peak is its own.
//
//	peakrss PROGRAM [ARG]...
//
// It exits with the command's exit code (128+N when a signal N ended it), and passes SIGINT and SIGTERM on.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 2 || os.Getenv("PEAKRSS_OUT") == "" {
		fmt.Fprintln(os.Stderr, "usage: PEAKRSS_OUT=FILE peakrss PROGRAM [ARG]...")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	ps := cmd.ProcessState
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		if err := os.WriteFile(os.Getenv("PEAKRSS_OUT"), []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "peakrss:", err)
			os.Exit(2)
		}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ps.ExitCode())
}
