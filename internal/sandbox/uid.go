//go:build unix

package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReserveIDs chooses the agent's uid and gid for one run of ralph: AgentUID, AgentGID plus the same offset,
// one that no running process has, nor its reaper uid (reaperUID). The agent's processes are reaped by
// their uid, so two ralphs on one machine (a self-hosted runner, parallel tests) must not share one: each
// would kill the other's agent and remove its files. A process of the uid shows only while the agent or a
// verify command runs, so ReserveIDs also holds the ids until release (or until the process ends, however
// it ends): an exclusive lock on a file of the uid's own in a directory only root may write (reserveDir),
// which another ralph's ReserveIDs skips. Only root switches the agent to another uid: for anyone else
// nothing is locked, and release does nothing.
func ReserveIDs() (uid, gid int, release func(), err error) {
	dir := ""
	if os.Geteuid() == 0 {
		if dir, err = reserveDir([]string{"/run", os.TempDir()}); err != nil {
			return 0, 0, nil, err
		}
	}
	return reserve(dir, randomOffset)
}

// reserve takes the first free offset that offset draws (at most 64 draws) whose lock file in dir it can
// lock; with no dir, the first free one, locking nothing.
func reserve(dir string, offset func() (int, bool)) (uid, gid int, release func(), err error) {
	inUse := idsInUse()
	for i := 0; i < 64; i++ {
		off, ok := offset()
		if !ok {
			break
		}
		if !free(inUse, off) {
			continue
		}
		if dir == "" {
			return AgentUID + off, AgentGID + off, func() {}, nil
		}
		f, err := lockID(dir, AgentUID+off)
		if err != nil {
			return 0, 0, nil, err
		}
		if f == nil {
			continue // another ralph holds it
		}
		return AgentUID + off, AgentGID + off, func() { _ = f.Close() }, nil
	}
	return 0, 0, nil, fmt.Errorf("no free uid for the agent between %d and %d (held by other runs of ralph in %s): let some finish, or run fewer at once on this machine", AgentUID, AgentUID+uidRange-1, dir)
}

// lockID locks uid's file in dir: the open file while held, nil when another process holds it.
func lockID(dir string, uid int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("reserving the agent's uid %d: %w", uid, err)
	}
	// flock's lock belongs to this open file: a second open of the same file, in this process or
	// another, cannot take it, and the kernel drops it when the file is closed or the process dies.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("reserving the agent's uid %d: %w", uid, err)
	}
	return f, nil
}

// reserveDir is where the runs of ralph on this machine hold their agents' uids: ralph-ids in the first of
// parents where it can be made (/run, else the temporary directory). It must be root's own directory that
// nobody else may write, or another user could hold every uid (or point a lock file elsewhere).
func reserveDir(parents []string) (string, error) {
	var last error
	for _, parent := range parents {
		dir := filepath.Join(parent, "ralph-ids")
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			last = err
			continue
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return "", fmt.Errorf("%s is not a directory of root's that only root may write (%v, owner %d): remove it, and ralph makes it anew", dir, fi.Mode(), st.Uid)
		}
		return dir, nil
	}
	return "", fmt.Errorf("making the directory where ralph holds its agents' uids: %w", last)
}

// idsInUse are the uids of the running processes.
func idsInUse() map[uint32]bool {
	inUse := map[uint32]bool{}
	paths, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				inUse[st.Uid] = true
			}
		}
	}
	return inUse
}

// free says whether neither the agent uid at off nor its reaper uid has a running process.
func free(inUse map[uint32]bool, off int) bool {
	reaper, _ := reaperUID(AgentUID + off)
	return !inUse[uint32(AgentUID+off)] && !inUse[uint32(reaper)]
}

// randomOffset draws an offset from 1 to uidRange-1. No run draws AgentUID itself: it stands for the run's
// uid where no run reserved one (gh ralph doctor's checks of what the agent's user can run).
func randomOffset() (int, bool) {
	n, err := rand.Int(rand.Reader, big.NewInt(uidRange-1))
	if err != nil {
		return 0, false
	}
	return 1 + int(n.Int64()), true
}
