//go:build unix

package sandbox

import (
	"crypto/rand"
	"math/big"
	"os"
	"path/filepath"
	"syscall"
)

// PickIDs chooses the agent's uid and gid for one run of ralph: AgentUID, AgentGID plus the same offset,
// one that no running process has, nor its reaper uid (reaperUID). The agent's processes are reaped by
// their uid, so two ralphs on one machine (a self-hosted runner, parallel tests) must not share one: each
// would kill the other's agent.
func PickIDs() (uid, gid int) {
	inUse := map[uint32]bool{}
	paths, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				inUse[st.Uid] = true
			}
		}
	}
	for i := 0; i < 64; i++ {
		n, err := rand.Int(rand.Reader, big.NewInt(uidRange))
		if err != nil {
			break
		}
		off := int(n.Int64())
		if reaper, _ := reaperUID(AgentUID + off); !inUse[uint32(AgentUID+off)] && !inUse[uint32(reaper)] {
			return AgentUID + off, AgentGID + off
		}
	}
	return AgentUID, AgentGID
}
