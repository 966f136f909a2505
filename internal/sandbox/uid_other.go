//go:build !unix

package sandbox

// ReserveIDs is AgentUID and AgentGID here, with nothing to release: the agent never runs as another user
// outside Linux.
func ReserveIDs() (uid, gid int, release func(), err error) {
	return AgentUID, AgentGID, func() {}, nil
}
