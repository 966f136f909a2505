//go:build !unix

package sandbox

import "errors"

// Seal is not supported here: the agent never runs as another user outside Linux.
func Seal(paths []string, agentUID, agentGID int) ([]string, error) {
	return nil, errors.New("sealing directories needs a Unix system")
}

// CanReach is always false here: there are no Unix permissions to check.
func CanReach(path string, uid, gid int) bool { return false }

// CanRun says whether the agent of cfg may run path: ralph's own uid runs it here.
func CanRun(cfg Config, path string) bool { return !cfg.Separate }
