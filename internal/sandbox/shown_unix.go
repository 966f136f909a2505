//go:build unix

package sandbox

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CanRun says whether the agent of cfg may run path: ralph's own uid when not Separate; otherwise the
// agent's uid (AgentUID when 0) reaches it, or it is under one of HomeTools, which the boundary shows the
// agent, with every directory from there down open to it and the file readable and executable.
func CanRun(cfg Config, path string) bool {
	if !cfg.Separate {
		return true
	}
	uid, gid := cfg.UID, cfg.GID
	if uid == 0 {
		uid, gid = AgentUID, AgentGID
	}
	if CanReach(path, uid, gid) {
		return true
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	perms := func(p string) uint32 {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil {
			return 0
		}
		return permsFor(st, uid, gid)
	}
	for _, t := range cfg.HomeTools {
		rel, err := filepath.Rel(t, resolved)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		open, dir := perms(t)&0o1 != 0, t
		for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
			if dir = filepath.Join(dir, part); perms(dir)&0o1 == 0 {
				open = false
			}
		}
		if open && perms(resolved)&0o5 == 0o5 {
			return true
		}
	}
	return false
}
