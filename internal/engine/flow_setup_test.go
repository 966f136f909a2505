package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// today is the engine's clock in these tests: artifact names carry its date.
var today = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

const day = "2026-03-04"

// harness is an Engine on the GitHub test server, a scripted agent and a real workspace: the server's
// bare repository as origin with main holding ralph's seed commit, a clone of it as the checkout, and workspace.Setup on that clone, as both
// doors open it. As root, Setup gives the agent a uid of its own; the fake agent runs in this process as
// root, so it hands the files it wrote to that uid (ralph refuses files in the agent's copy that the agent
// does not own).
type harness struct {
	t      *testing.T
	gh     *hub         // the GitHub test server
	hub    *hub         // the same, by the name the tests that reach into the server use
	lister sweep.Lister // what the sweep reads of GitHub: the engine's client of it
	agent  *fakeAgent
	lock   *fakeLocker
	log    *fakeLog
	eng    *engine.Engine
	origin string
	env    []string
}

// newHarness makes a harness with the default config (self_review off, so the pr step opens the pull
// request) changed by mod, on the GitHub test server (internal/githubtest) through ghapi.Client, as ralph
// runs, with the server's repository as the origin ralph pushes to.
func newHarness(t *testing.T, mod func(c *config.Config)) *harness {
	t.Helper()
	return buildHarness(t, mod, newHub(t))
}

func buildHarness(t *testing.T, mod func(c *config.Config), server *hub) *harness {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, agent: &fakeAgent{}, lock: &fakeLocker{}, log: &fakeLog{},
		env: []string{
			"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=Someone", "GIT_AUTHOR_EMAIL=someone@example.com",
			"GIT_COMMITTER_NAME=Someone", "GIT_COMMITTER_EMAIL=someone@example.com",
		},
	}
	h.gh, h.hub, h.origin, h.lister = server, server, server.srv.BareRepo, server.client
	github := server.client
	seed, checkout := filepath.Join(root, "seed"), filepath.Join(root, "checkout")
	h.run(root, "clone", "--quiet", h.origin, seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("widgets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run(seed, "add", ".")
	h.run(seed, "commit", "--quiet", "-m", "initial")
	h.run(seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	h.run(root, "clone", "--quiet", h.origin, checkout)

	cfg := config.Default()
	cfg.SelfReview = false
	cfg.Agent.Preset = "command"
	cfg.Agent.Command = "fake-agent"
	if mod != nil {
		mod(&cfg)
	}
	store, sb, closePlaces, err := workspace.Setup{Checkout: checkout, Protected: cfg.ProtectedBy, Branches: cfg.BranchPrefix, Getenv: os.Getenv}.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closePlaces(); err != nil {
			t.Errorf("removing ralph's places: %v", err)
		}
		// Not as root, ralph keeps its repository for the checkout in the user's cache, which a real
		// checkout reuses from run to run; this test's checkout is gone with the test.
		if os.Geteuid() != 0 {
			if err := os.RemoveAll(filepath.Dir(store.Repo().GitDir)); err != nil {
				t.Errorf("removing ralph's repository of the test's checkout: %v", err)
			}
		}
	})
	// In a test binary, reaping every descendant would kill the other tests' processes (sandbox.Config).
	sb.ReapDescendants = false
	// The tests run on the machine's own network: ralph must not install its firewall rule there.
	sb.Getenv = func(key string) string {
		if key == sandbox.EnvFirewall {
			return "off"
		}
		return ""
	}
	if sb.Separate {
		h.agent.owner = [2]int{sb.UID, sb.GID}
	}
	h.eng = engine.New(engine.Engine{
		GitHub: github, Workspaces: store, Sandbox: sb, Agent: h.agent, Config: cfg, Prompts: prompts.New(""),
		Lock: h.lock, Log: h.log, AgentEnv: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Origin: engine.Origin{URL: repoURL + "/actions/runs/77", Label: "Actions run 77"},
		Author: git.Signature{Name: "ralph", Email: "ralph@example.com"},
		Now:    func() time.Time { return today },
	})
	return h
}

// run runs the test's own git in dir.
func (h *harness) run(dir string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// originGit runs git on the origin, where ralph pushes.
func (h *harness) originGit(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = h.origin, h.env
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// subjects are the subjects of the commits on branch that main has not, oldest first (none when the
// branch does not exist).
func (h *harness) subjects(branch string) []string {
	h.t.Helper()
	if !h.branchExists(branch) {
		return nil
	}
	out, err := h.originGit("log", "--reverse", "--format=%s", "main..refs/heads/"+branch)
	if err != nil {
		h.t.Fatalf("git log %s: %v", branch, err)
	}
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// show is the content of path on branch in the origin ("" and false when it is not there).
func (h *harness) show(branch, path string) (string, bool) {
	out, err := h.originGit("show", "refs/heads/"+branch+":"+path)
	return out, err == nil
}

// branchExists says whether the origin has branch.
func (h *harness) branchExists(branch string) bool {
	_, err := h.originGit("rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// pushOther pushes a commit of someone else's on branch (from main when the branch is new).
func (h *harness) pushOther(branch, name string) {
	h.t.Helper()
	dir := filepath.Join(h.t.TempDir(), "other")
	h.run("", "clone", "--quiet", h.origin, dir)
	if h.branchExists(branch) {
		h.run(dir, "checkout", "--quiet", "-B", "work", "origin/"+branch)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("someone else's\n"), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.run(dir, "add", ".")
	h.run(dir, "commit", "--quiet", "-m", "other: "+name)
	h.run(dir, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/"+branch)
}

// advance runs Advance and fails the test on an error.
func (h *harness) advance(n int) engine.Result {
	h.t.Helper()
	res, err := h.eng.Advance(context.Background(), n)
	if err != nil {
		h.t.Fatalf("Advance(#%d): %v", n, err)
	}
	return res
}

// enrolled opens an issue carrying ralph:build, as a person enrolling it would.
func (h *harness) enrolled(title string) int {
	return h.gh.addIssue(title, "Please make widgets parse.\n", workflow.LabelBuild)
}

// wantState checks that the issue's only state label, and ralph's record, say st.
func (h *harness) wantState(n int, st workflow.State) {
	h.t.Helper()
	if got := h.gh.stateLabels(n); !slices.Equal(got, []workflow.State{st}) {
		h.t.Errorf("#%d state labels = %v, want [%s]", n, got, st)
	}
	if rec := h.gh.record(h.t, n); rec.State != st {
		h.t.Errorf("#%d record state = %s, want %s", n, rec.State, st)
	}
}

// to advances issue n until it is in state st (at most limit runs), failing on an error.
func (h *harness) to(n int, st workflow.State, limit int) engine.Result {
	h.t.Helper()
	var res engine.Result
	for i := 0; i < limit; i++ {
		res = h.advance(n)
		if res.State == st {
			return res
		}
	}
	h.t.Fatalf("#%d did not reach %s in %d runs; it is %s (%s)", n, st, limit, res.State, res.Message)
	return res
}

// branchOf is the branch ralph names for issue n with slug.
func branchOf(n int, slug string) string { return "ralph/" + strconv.Itoa(n) + "-" + slug }
