//go:build !unix

package sandbox

// PickIDs is AgentUID and AgentGID here: the agent never runs as another user outside Linux.
func PickIDs() (uid, gid int) { return AgentUID, AgentGID }

// ReserveIDs is PickIDs here, with nothing to release.
func ReserveIDs() (uid, gid int, release func(), err error) {
	return AgentUID, AgentGID, func() {}, nil
}
