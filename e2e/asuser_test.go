package e2e

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// ralph runs two ways, and its promises hold both: as root (the Action's container, CI), where the agent
// runs as a user of its own; and as a normal user (gh ralph on a laptop, or a runner without root), where
// the agent is ralph's own user, kept in by ralph's supervisor and by Landlock where the kernel has it.
// CI runs the tests as root, so the harness can run ralph as an ordinary user too: runAs says which.

// runAs is who the harness runs ralph as: the Action's binary, and the binary or gh in the CLI door. The
// zero value is the test process's own user, as newEnv and newCLIEnv do.
type runAs struct {
	name string // the subtest's name
	// unprivileged runs ralph as a normal user: when the test process is root, a uid of the env's own,
	// which owns every directory and file ralph needs (HOME, TMPDIR, the workspace, the runner's files,
	// the origin); otherwise the test process's user, which already is one.
	unprivileged bool
}

var (
	asRoot = runAs{name: "root"}
	asUser = runAs{name: "user", unprivileged: true}
)

// bothUsers runs f as the parallel subtests "root" (ralph as root: the agent gets a uid of its own) and
// "user" (ralph as a normal user: the agent is that user). Root mode needs root; elsewhere "user" alone runs
// and the test says so. It calls t.Parallel itself. A test adopts it by wrapping its body and making its
// env for the mode:
//
//	func TestHostileSomething(t *testing.T) {
//		bothUsers(t, func(t *testing.T, as runAs) {
//			e := newEnvAs(t, as, baseConfig(t, "")) // or newCLIEnvAs(t, as, agentConfig(t))
//			…
//		})
//	}
//
// In user mode the test's own git on the origin must go through e.git or e.gitCommand (they run as ralph's
// user: git refuses a repository another user owns), and the test's files ralph must reach go under
// e.tempDir(), not t.TempDir() (root's, 0700). What legitimately differs as a normal user is asked of
// e.sameUser() and landlock(r.stderr) (without Landlock the agent may write wherever ralph's user may);
// nothing asserted as root is weakened. Every run checks who its agent was (checkAgentUser).
func bothUsers(t *testing.T, f func(t *testing.T, as runAs)) {
	t.Helper()
	t.Parallel()
	modes := []runAs{asRoot, asUser}
	if os.Geteuid() != 0 {
		t.Log("root mode needs root (ralph gives the agent a user of its own only as root): running as a normal user only")
		modes = modes[1:]
	}
	for _, as := range modes {
		t.Run(as.name, func(t *testing.T) {
			t.Parallel()
			f(t, as)
		})
	}
}

// userUIDBase is the first uid the harness gives ralph in user mode: above the agents' range
// (sandbox.AgentUID on), away from the system's users. Each env takes the next one, so that no two
// parallel tests' ralphs or agents share a uid (a hostile agent reading /proc would otherwise see the other
// test's processes as its own); the random start keeps two test processes apart.
var userUIDBase = uint32(100000 + rand.IntN(50000)*16)

var userUIDs atomic.Uint32

// credential is the uid and gid the env's ralph runs as; nil: the test process's.
func (as runAs) credential() *syscall.Credential {
	if !as.unprivileged || os.Geteuid() != 0 {
		return nil
	}
	id := userUIDBase + userUIDs.Add(1)
	// Groups nil: the process keeps no supplementary group of the test's.
	return &syscall.Credential{Uid: id, Gid: id}
}

// setUser gives the env its user: the HOME, the TMPDIR and the origin that user needs.
func (e *env) setUser(as runAs) {
	e.t.Helper()
	e.cred = as.credential()
	if e.cred == nil {
		e.home = e.t.TempDir()
		return
	}
	base, err := os.MkdirTemp("", "ralph-user-")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.base = base
	e.home = e.tempDir()
	e.tmp = e.tempDir()
	e.shareOrigin()
}

// sameUser says whether the agent runs as ralph's own user (ralph is not root), where only Landlock keeps
// its writes in.
func (e *env) sameUser() bool { return e.cred != nil || os.Geteuid() != 0 }

// userEnv is what the environment of every process the harness starts for ralph's user adds: its HOME
// (gitEnv), its TMPDIR and its cache directory, where gh ralph keeps its repository.
func (e *env) userEnv() []string {
	if e.cred == nil {
		return nil
	}
	return []string{"TMPDIR=" + e.tmp, "XDG_CACHE_HOME=" + filepath.Join(e.home, ".cache")}
}

// sysProcAttr runs a process as ralph's user.
func (e *env) sysProcAttr() *syscall.SysProcAttr {
	if e.cred == nil {
		return nil
	}
	c := *e.cred
	return &syscall.SysProcAttr{Credential: &c}
}

// tempDir is a new directory for the test's files that ralph's user must reach: t.TempDir(), or in user
// mode a directory that user owns (a test's temporary directory is root's, and 0700).
func (e *env) tempDir() string {
	e.t.Helper()
	if e.cred == nil {
		return e.t.TempDir()
	}
	d, err := os.MkdirTemp(e.base, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.own(d)
	return d
}

// own gives path, and everything under it, to ralph's user (nothing to do when ralph is the test's user).
func (e *env) own(path string) {
	e.t.Helper()
	if e.cred == nil {
		return
	}
	err := filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(e.cred.Uid), int(e.cred.Gid))
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// reach lets every user through the directories above path, up to the system's temporary directory:
// a test's temporary directory is 0700.
func (e *env) reach(path string) {
	e.t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Dir(path); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			e.t.Fatal(err)
		}
		if info.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, info.Mode().Perm()|0o011); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// shareOrigin makes the origin (the test server's bare repository, which the workspace's remote names by
// its path) ralph's user's: that user must reach it and own it, because git refuses a repository another
// user owns and ralph's git reads no config that could allow it. The server's own git, root's, keeps adding
// to it (refs and objects written through the API): core.sharedRepository makes what it adds writable for
// ralph's user.
func (e *env) shareOrigin() {
	e.t.Helper()
	e.reach(e.srv.BareRepo)
	cfg := exec.Command("git", "config", "core.sharedRepository", "0666")
	cfg.Env = append(os.Environ(), "GIT_DIR="+e.srv.BareRepo, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cfg.CombinedOutput(); err != nil {
		e.t.Fatalf("sharing the origin: %v\n%s", err, out)
	}
	e.own(e.srv.BareRepo)
}

// resetAgentUser forgets who the last run's agent was, before a run.
func (e *env) resetAgentUser() {
	if err := os.Remove(filepath.Join(e.control, "agent.uid")); err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
}

// checkAgentUser checks who the run's scripted agent was (agent.uid, written first thing), when an agent
// ran: ralph's user in user mode, a user of its own (sandbox.AgentUID on, never root, never the test's
// users) when ralph runs as root, the test process's user otherwise.
func (e *env) checkAgentUser() {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.control, "agent.uid"))
	if err != nil || len(b) == 0 {
		return // no agent ran, or one not of agent.sh
	}
	got, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		e.t.Errorf("agent.uid holds %q", b)
		return
	}
	switch {
	case e.cred != nil:
		if uint32(got) != e.cred.Uid {
			e.t.Errorf("the agent ran as uid %d, want ralph's user %d", got, e.cred.Uid)
		}
	case os.Geteuid() == 0:
		if got < sandbox.AgentUID || uint32(got) >= userUIDBase {
			e.t.Errorf("the agent ran as uid %d, want a user of its own (%d on)", got, sandbox.AgentUID)
		}
	default:
		if int(got) != os.Geteuid() {
			e.t.Errorf("the agent ran as uid %d, want ralph's (the test's) %d", got, os.Geteuid())
		}
	}
}

// newEnvAs is newEnv with ralph run as as says.
func newEnvAs(t testing.TB, as runAs, configYAML string) *env {
	t.Helper()
	return newEnvWithAs(t, as, configYAML, githubtest.Options{})
}

// newCLIEnvAs is newCLIEnv with ralph (and gh) run as as says.
func newCLIEnvAs(t *testing.T, as runAs, configYAML string) *cliEnv {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true})
	return newCLIEnvOnAs(t, as, srv, configYAML, cliVars(t, srv))
}

// Both doors run ralph as who the mode says, and its agent as who ralph gives it: the agent writes the
// uid of every gh-ralph process above it (ralph, its supervisor) and its own.
func TestHostileRunsAsBothUsers(t *testing.T) {
	const script = `
ctl="$RALPH_TEST_CONTROL"
id -u > "$ctl/self-uid"
pid=$PPID
while [ "$pid" -gt 1 ]; do
  if [ "$(cat /proc/$pid/comm)" = gh-ralph ]; then
    awk '/^Uid:/ { print $2 }' /proc/$pid/status >> "$ctl/ralph-uids"
  fi
  pid=$(awk '/^PPid:/ { print $2 }' /proc/$pid/status)
done
`
	bothUsers(t, func(t *testing.T, as runAs) {
		for _, door := range []string{"action", "cli"} {
			t.Run(door, func(t *testing.T) {
				t.Parallel()
				var e *env
				var log string
				if door == "action" {
					e = newEnvAs(t, as, baseConfig(t, ""))
					e.setControl("extra_research", script)
					n := e.srv.CreateIssue("octocat", "Add a greeting", "")
					r := e.label(n, maintainer)
					if r.exit != 0 {
						t.Fatalf("research: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
					}
					log = r.stdout + r.stderr
				} else {
					c := newCLIEnvAs(t, as, agentConfig(t))
					e = c.env
					e.setControl("extra_research", script)
					n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
					e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
					r := c.cli(binary, "advance", fmt.Sprint(n))
					if r.exit != 0 {
						t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
					}
					log = r.stdout + r.stderr
				}
				t.Logf("landlock in force: %v", landlock(log))
				ralphUID := uint32(os.Geteuid())
				if e.cred != nil {
					ralphUID = e.cred.Uid
				}
				b, _ := os.ReadFile(filepath.Join(e.control, "ralph-uids"))
				uids := strings.Fields(string(b))
				if len(uids) == 0 {
					t.Fatalf("the agent found no gh-ralph process above it")
				}
				for _, u := range uids {
					if u != fmt.Sprint(ralphUID) {
						t.Errorf("a gh-ralph process above the agent runs as uid %s, want %d (all: %v)", u, ralphUID, uids)
					}
				}
				self, _ := os.ReadFile(filepath.Join(e.control, "self-uid"))
				agentUID, _ := strconv.Atoi(strings.TrimSpace(string(self)))
				switch {
				case as.unprivileged && agentUID != int(ralphUID):
					t.Errorf("the agent runs as uid %d, want ralph's user %d", agentUID, ralphUID)
				case !as.unprivileged && (agentUID < sandbox.AgentUID || agentUID == int(ralphUID)):
					t.Errorf("the agent runs as uid %d, want a user of its own (%d on)", agentUID, sandbox.AgentUID)
				}
				t.Logf("ralph ran as uid %d, its agent as uid %d", ralphUID, agentUID)
			})
		}
	})
}
