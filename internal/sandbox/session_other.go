//go:build !unix

package sandbox

import "syscall"

// sessionAttr is nothing here: no sessions or process groups.
func sessionAttr() *syscall.SysProcAttr { return nil }
