//go:build !unix

package sandbox

import "errors"

// Seal is not supported here: the agent never runs as another user outside Linux.
func Seal(paths []string, agentUID, agentGID int) ([]string, error) {
	return nil, errors.New("sealing directories needs a Unix system")
}

// CanReach is always false here: there are no Unix permissions to check.
func CanReach(path string, uid, gid int) bool { return false }
