//go:build unix

package sandbox

import "syscall"

// sessionAttr starts the supervisor in a session of its own, with no controlling terminal, as the leader of
// a process group that the agent joins.
func sessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
