package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// dockerSocket is where the runner mounts the Docker socket into every container action: root on the
// runner for whoever can connect to it.
const dockerSocket = "/var/run/docker.sock"

// workspaces opens ralph's own repository for this run and the agent's boundary. In the Action's
// container ralph is root: the agent gets a user of its own, and the directory holding the runner's mounts
// (/github: the workspace and its .git, file commands, runner temp, home) is closed to it.
func (r *runner) workspaces(ctx context.Context, cfg config.Config, checkout, token string) (*workspace.Store, sandbox.Config, func(), error) {
	cache, err := workspace.CacheDir(checkout)
	if err != nil {
		return nil, sandbox.Config{}, nil, err
	}
	uid, gid := sandbox.PickIDs()
	places, err := workspace.NewPlaces(cache, uid, gid)
	if err != nil {
		return nil, sandbox.Config{}, nil, err
	}
	closeAll := func() {
		if err := places.Close(); err != nil {
			r.a.Warningf("removing ralph's temporary files: %v", err)
		}
	}
	store, err := workspace.Open(ctx, workspace.Options{
		GitDir: places.GitDir, Agents: places.Agents, Source: checkout,
		Auth: git.Auth{Token: token}, Owner: places.Owner, Protected: cfg.Protected,
	})
	if err != nil {
		closeAll()
		return nil, sandbox.Config{}, nil, err
	}
	sb := sandbox.Config{
		Separate: places.Owner.UID != 0, UID: places.Owner.UID, GID: places.Owner.GID,
		Writable:        filepath.SplitList(r.getenv("RALPH_AGENT_WRITABLE")),
		RequireLandlock: cfg.Agent.Landlock == config.LandlockRequired,
		ReapDescendants: true,
	}
	return store, sb, closeAll, nil
}

// preflight makes sure, before any issue is locked or changed, that the agent can run and cannot reach
// what is the runner's; it says in the log what the boundary is.
func (r *runner) preflight(cfg config.Config, sb sandbox.Config) error {
	if sb.Separate && r.getenv("GITHUB_ACTIONS") == "true" {
		if err := r.seal(sb); err != nil {
			return fmt.Errorf("the agent's boundary cannot be set up, so ralph left the issue alone: %w", err)
		}
	}
	desc, err := agent.Preflight(cfg.Agent, r.env.Environ, sb)
	if err != nil {
		return err
	}
	if err := agent.PreflightGateway(cfg, r.env.Environ); err != nil {
		return err
	}
	r.a.Infof("the agent runs as %s", desc)
	return nil
}

// systemDirs are never closed to the agent: the system needs them, and so does the agent's CLI. A path
// that is reachable in one of them is an error instead.
var systemDirs = map[string]bool{
	"/": true, "/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true,
	"/lib64": true, "/media": true, "/mnt": true, "/opt": true, "/proc": true, "/root": true, "/sbin": true,
	"/srv": true, "/sys": true, "/tmp": true, "/usr": true, "/var": true,
}

// seal closes to the agent's user the directory that holds the runner's mounts (the workspace's parent:
// /github in the container, a directory of the container's own), then checks that nothing of the
// runner's is within its reach: the workspace, the file commands, the runner's temp and home, the event,
// the Docker socket and the paths named in RALPH_AGENT_DENY. What is still reachable has its own
// directory closed; what is reachable after that is an error.
func (r *runner) seal(sb sandbox.Config) error {
	uid, gid := sb.UID, sb.GID
	sensitive := []string{r.getenv("GITHUB_WORKSPACE"), r.getenv("RUNNER_TEMP"), r.getenv("HOME"), r.getenv("GITHUB_EVENT_PATH"), dockerSocket}
	for _, k := range []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		sensitive = append(sensitive, r.getenv(k))
	}
	sensitive = append(sensitive, filepath.SplitList(r.getenv("RALPH_AGENT_DENY"))...)
	closed, err := sandbox.Seal([]string{filepath.Dir(r.getenv("GITHUB_WORKSPACE"))}, uid, gid)
	if err != nil {
		return err
	}
	var open []string
	for _, p := range sensitive {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if !sandbox.CanReach(p, uid, gid) {
			continue
		}
		dir := filepath.Dir(p)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if !systemDirs[dir] {
			more, err := sandbox.Seal([]string{dir}, uid, gid)
			if err != nil {
				return err
			}
			closed = append(closed, more...)
		}
		if sandbox.CanReach(p, uid, gid) {
			open = append(open, p)
		}
	}
	if len(closed) > 0 {
		r.a.Infof("closed to the agent: %s", strings.Join(closed, ", "))
	}
	if len(open) > 0 {
		return fmt.Errorf("the agent's user could still reach %s", strings.Join(open, ", "))
	}
	return nil
}
