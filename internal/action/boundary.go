package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// dockerSocket is where the runner mounts the Docker socket into every container action: root on the
// runner for whoever can connect to it.
const dockerSocket = "/var/run/docker.sock"

// preflight makes sure, before any issue is locked or changed, that the agent can run and cannot reach
// what is the runner's. It returns the lines that say what the boundary is, for the log when the agent
// first runs (compose.Announced); the others it says now.
func (r *runner) preflight(ctx context.Context, cfg config.Config, sb sandbox.Config) (boundary []string, err error) {
	if sb.Separate && r.ev.InActions {
		if err := r.seal(sb); err != nil {
			return nil, fmt.Errorf("the agent's boundary cannot be set up, so ralph left the issue alone: %w", err)
		}
	}
	info, err := doctor.Start(ctx, cfg, r.env.Environ, sb, r.chainWorkflow(cfg), doctor.InAction)
	for _, line := range info {
		if compose.BoundaryLine(line) {
			boundary = append(boundary, line)
			continue
		}
		r.a.Infof("%s", line)
	}
	var se *doctor.StartError
	if errors.As(err, &se) {
		for _, p := range se.Problems {
			r.a.Errorf("%s", strings.TrimPrefix(p.String(), "X "))
		}
		r.a.Errorf("the agent cannot run here, so ralph left the issue alone: %d problem(s) above; nothing on the issue changed", len(se.Problems))
	}
	return boundary, err
}

// chainWorkflow is workflowFile with the workflow the chain dispatches found (doctor.ResolveChain): a
// sweep's workflow has no issue input, and its runs dispatch the label workflow's.
func (r *runner) chainWorkflow(cfg config.Config) *doctor.Workflow {
	wf := r.workflowFile()
	if wf != nil {
		doctor.ResolveChain(r.ev.Workspace, wf, cfg)
	}
	return wf
}

// workflowFile is the workflow this run was started from, as it is in the checkout (nil when it cannot be
// read there: GITHUB_WORKFLOW_REF names another repository, or the checkout lacks it).
func (r *runner) workflowFile() *doctor.Workflow {
	ref, _, _ := strings.Cut(r.ev.WorkflowRef, "@")
	rel, ok := strings.CutPrefix(ref, r.ev.Repository+"/")
	if !ok || rel == "" {
		return nil
	}
	b, err := doctor.ReadWorkflowFile(filepath.Join(r.ev.Workspace, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	wf, err := doctor.ParseWorkflow(rel, b)
	if err != nil {
		r.a.Warningf("reading %s: %v", rel, err)
		return nil
	}
	return wf
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
	ev := r.ev
	sensitive := []string{ev.Workspace, ev.RunnerTemp, ev.Home, ev.EventPath, dockerSocket}
	sensitive = append(sensitive, ev.FileCommands...)
	sensitive = append(sensitive, ev.Deny...)
	closed, err := r.sealDir(filepath.Dir(ev.Workspace), uid, gid)
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
			more, err := r.sealDir(dir, uid, gid)
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

// sealDir closes dir to the agent's user (sandbox.Seal) and remembers its mode, so that unseal gives it
// back when the run ends: a run started by hand with GITHUB_ACTIONS=true leaves no directory of the
// machine changed, and a runner's job loses nothing by it.
func (r *runner) sealDir(dir string, uid, gid int) ([]string, error) {
	fi, statErr := os.Stat(dir)
	closed, err := sandbox.Seal([]string{dir}, uid, gid)
	if len(closed) > 0 && statErr == nil {
		mode := fi.Mode().Perm() | fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
		r.sealed = append(r.sealed, sealedDir{path: dir, mode: mode})
	}
	return closed, err
}

// sealedDir is a directory seal closed, and its mode before.
type sealedDir struct {
	path string
	mode os.FileMode
}

// unseal gives each directory seal closed its mode back, last closed first, once nothing of the agent
// runs any more.
func (r *runner) unseal() {
	for i := len(r.sealed) - 1; i >= 0; i-- {
		d := r.sealed[i]
		if err := os.Chmod(d.path, d.mode); err != nil {
			r.a.Warningf("giving %s its mode %04o back: %v", d.path, d.mode, err)
			continue
		}
		r.a.Infof("gave %s its mode %04o back", d.path, d.mode)
	}
	r.sealed = nil
}
