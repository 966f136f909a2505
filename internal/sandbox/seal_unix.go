//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Seal takes away from others, and from the group when the group is agentGID, every permission on each of
// paths: in the Action, the directories the agent must not reach (the runner's mounts, the Docker socket's
// directory). A path that does not exist is left alone. It returns what it changed, for the log.
func Seal(paths []string, agentUID, agentGID int) ([]string, error) {
	var changed []string
	for _, p := range paths {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return changed, fmt.Errorf("seal %s: %w", p, err)
		}
		if int(st.Uid) == agentUID {
			// Its owner may always chmod it back.
			return changed, fmt.Errorf("seal %s: it belongs to the agent's uid %d", p, agentUID)
		}
		mode := uint32(st.Mode) & 0o7777
		sealed := mode &^ 0o007
		if int(st.Gid) == agentGID {
			sealed &^= 0o070
		}
		if sealed == mode {
			continue
		}
		if err := unix.Chmod(p, sealed); err != nil {
			return changed, fmt.Errorf("seal %s: %w", p, err)
		}
		changed = append(changed, fmt.Sprintf("%s: mode %04o -> %04o", p, mode, sealed))
	}
	return changed, nil
}

// CanReach says whether a process with uid and gid and no supplementary groups could search every
// directory above path and use path in some way (read, write or execute), by the mode bits alone: ACLs and
// Landlock are not considered. A path that does not exist is not reachable.
func CanReach(path string, uid, gid int) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	if uid == 0 {
		return true
	}
	var st unix.Stat_t
	if unix.Stat(resolved, &st) != nil || permsFor(st, uid, gid) == 0 {
		return false
	}
	for dir := filepath.Dir(resolved); ; dir = filepath.Dir(dir) {
		if unix.Stat(dir, &st) != nil || permsFor(st, uid, gid)&0o1 == 0 {
			return false
		}
		if dir == filepath.Dir(dir) {
			return true
		}
	}
}

// permsFor is the rwx bits that apply to uid and gid: the owner's, or else the group's, or else others'.
func permsFor(st unix.Stat_t, uid, gid int) uint32 {
	mode := uint32(st.Mode)
	switch {
	case int(st.Uid) == uid:
		return mode >> 6 & 0o7
	case int(st.Gid) == gid:
		return mode >> 3 & 0o7
	}
	return mode & 0o7
}
