package compose

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

type testLog struct{ warnings []string }

func (l *testLog) Infof(string, ...any) {}
func (l *testLog) Warnf(format string, args ...any) {
	l.warnings = append(l.warnings, format)
}
func (l *testLog) Untrusted(string) (io.Writer, func()) { return io.Discard, func() {} }

func client(t *testing.T, srv *githubtest.Server, token string) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, Server: srv.ServerURL, GraphQL: srv.GraphQLURL},
		Token:     token, Owner: "octo", Repo: "demo", Transport: srv.Client().Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkout is a clone of the server's repository, as both doors have one.
func checkout(t *testing.T, srv *githubtest.Server) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	if out, err := exec.Command("git", "clone", "-q", srv.BareRepo, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir
}

// Every field of the engine that a door decides comes from its Door, and nothing of one door is left in
// Build: the Action and gh ralph, given the same Door, get the same engine.
func TestBuildTakesTheDoor(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	gh := client(t, srv, "test-token")
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	var stopped []string
	log := &testLog{}
	cfg := config.Default()
	cfg.AllowedBots = []string{"helper[bot]"}
	d := Door{
		GitHub: gh, Token: "test-token", Config: cfg, Checkout: checkout(t, srv), Writable: []string{t.TempDir()}, Log: log,
		Holder:  lock.Holder{Kind: "actions", RunID: 5, RunURL: gh.RunURL(5)},
		Origin:  engine.Origin{URL: gh.RunURL(5), Label: "Actions run 5"},
		Author:  git.Signature{Name: "someone", Email: "someone@example.com"},
		Environ: []string{"PATH=/bin"}, Transport: srv.Client().Transport, ProjectToken: "project-token",
		Now: func() time.Time { return now }, Checkpoint: func(name string) { stopped = append(stopped, name) }, DryRun: true,
	}
	eng, cleanup, err := Build(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()

	type fields struct {
		Secrets, AgentEnv, AllowedBots []string
		Run                            engine.Origin
		Author                         git.Signature
		Now                            time.Time
		DryRun, Store, Ledger, Prompts bool
		Log                            engine.Logger
	}
	got := fields{
		Secrets: eng.Secrets, AgentEnv: eng.AgentEnv, AllowedBots: eng.Config.AllowedBots, Run: eng.Origin, Author: eng.Author,
		Now: eng.Now(), DryRun: eng.DryRun, Store: eng.Workspaces != nil, Ledger: eng.Ledger != nil, Prompts: eng.Prompts != nil,
		Log: eng.Log,
	}
	want := fields{
		Secrets: []string{"test-token", "project-token"}, AgentEnv: d.Environ, AllowedBots: cfg.AllowedBots, Run: d.Origin,
		Author: d.Author, Now: now, DryRun: true, Store: true, Ledger: true, Prompts: true, Log: log,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b engine.Logger) bool { return a == b })); diff != "" {
		t.Errorf("engine (-want +got):\n%s", diff)
	}
	if eng.ModelTransport != d.Transport {
		t.Error("the model gateway does not reach the vendor through the door's transport")
	}
	eng.Checkpoint("after-commit")
	if diff := cmp.Diff([]string{"after-commit"}, stopped); diff != "" {
		t.Errorf("checkpoint (-want +got):\n%s", diff)
	}
	if eng.OnState != nil {
		t.Error("OnState is set although the config names no project")
	}
	if diff := cmp.Diff(d.Writable, eng.Sandbox.Writable); diff != "" {
		t.Errorf("the agent's extra writable places (-want +got):\n%s", diff)
	}

	// The lock is held in the Door's holder's name.
	lease, err := eng.Lock.Acquire(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(context.Background()) }()
	other := &lock.Locker{Refs: lock.RESTRefs{API: gh}, Runs: gh, Holder: lock.Holder{Kind: "local", Host: "laptop", PID: 1}, Lease: time.Hour}
	_, err = other.Acquire(context.Background(), 3)
	var held *lock.HeldError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, "Actions run 5") {
		t.Errorf("another holder's Acquire: %v, want the issue held by Actions run 5", err)
	}
}

// Without a checkout (a person's approve outside a clone) there is no ralph repository to write to: no
// store, no ledger, the built-in prompts, and a boundary that still reaps the agent's descendants.
func TestBuildWithoutCheckout(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	cfg := config.Default()
	cfg.Agent.Landlock = config.LandlockRequired
	eng, cleanup, err := Build(context.Background(), Door{GitHub: client(t, srv, "test-token"), Token: "test-token", Config: cfg, Log: &testLog{}})
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if eng.Workspaces != nil || eng.Ledger != nil {
		t.Errorf("store %v, ledger %v without a checkout", eng.Workspaces, eng.Ledger)
	}
	if !eng.Sandbox.ReapDescendants || !eng.Sandbox.RequireLandlock {
		t.Errorf("sandbox %+v: want ReapDescendants and the config's RequireLandlock", eng.Sandbox)
	}
}

// The engine sees a held issue as its own HeldError, with lock's words for the holder; the sweep sees the
// same lock's check.
func TestLockHeld(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	gh := client(t, srv, "test-token")
	ctx := context.Background()
	first := &lock.Locker{Refs: lock.RESTRefs{API: gh}, Runs: gh, Holder: lock.Holder{Kind: "actions", RunID: 77}, Lease: time.Hour}
	srv.SetWorkflowRun(77, "in_progress", "")
	lease, err := first.Acquire(ctx, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(ctx) }()

	eng, cleanup, err := Build(ctx, Door{GitHub: gh, Token: "test-token", Config: config.Default(), Log: &testLog{},
		Holder: lock.Holder{Kind: "local", Host: "laptop", PID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	_, err = eng.Lock.Acquire(ctx, 9)
	var held *engine.HeldError
	if !errors.As(err, &held) || !strings.HasPrefix(held.Holder, "Actions run 77 since ") {
		t.Fatalf("Acquire of a held issue: %v, want *engine.HeldError naming Actions run 77", err)
	}
	if got, want := held.Error(), (&lock.HeldError{Holder: held.Holder}).Error(); got != want {
		t.Errorf("engine's words %q, lock's %q", got, want)
	}
	var opts sweep.Options
	SweepLocks(eng, &opts)
	if opts.Locks == nil || opts.Locked == nil {
		t.Fatal("SweepLocks of a built engine left the sweep without the lock's checks: it would count every lock as live")
	}
	if live, _, err := opts.Locks(ctx, 9); err != nil || !live {
		t.Errorf("Locks(9) = %v, %v; want live", live, err)
	}
	var none sweep.Options
	SweepLocks(&engine.Engine{Lock: engine.Unlocked{}}, &none)
	if none.Locks != nil || none.Locked != nil {
		t.Error("SweepLocks of an engine without ralph's lock set its checks")
	}
}

// The project board: with a hint (gh ralph), a token that cannot reach it is told once, with the hint,
// then left alone; without one (the Action), every refusal is reported as it comes. No project token, no
// board.
func TestBoard(t *testing.T) {
	t.Parallel()
	for _, hint := range []string{"", "run gh auth refresh -s project"} {
		srv := githubtest.New(t, githubtest.Options{})
		srv.CreateProject("octo", 4, "Roadmap")
		srv.SetProjectToken("another-token") // the door's token does not reach projects
		gh := client(t, srv, "test-token")
		ctx := context.Background()
		n := srv.CreateIssue("mona", "Title", "")
		issue, err := gh.Issue(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Project = &config.Project{Owner: "octo", Number: 4, Field: "Workflow State"}
		d := Door{GitHub: gh, Token: "test-token", Config: cfg, Log: &testLog{}, Transport: srv.Client().Transport,
			ProjectHint: hint}
		eng, _, err := Build(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if eng.OnState != nil {
			t.Errorf("hint %q: a board without a project token", hint)
		}
		d.ProjectToken = "test-token"
		if eng, _, err = Build(ctx, d); err != nil {
			t.Fatal(err)
		}
		err1 := eng.OnState(ctx, issue.NodeID, n, workflow.ReadyForPlan)
		err2 := eng.OnState(ctx, issue.NodeID, n, workflow.ReadyForPlan)
		if err1 == nil || !strings.Contains(err1.Error(), hint) {
			t.Errorf("hint %q: first refusal %v", hint, err1)
		}
		if (err2 == nil) != (hint != "") {
			t.Errorf("hint %q: second refusal %v", hint, err2)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bad.yml"), []byte("sweep:\n  max: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".github", "ralph.yml"), []byte("branch_prefix: bot/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name, root, rel string
		prefix          string // the config's branch prefix
		err             string // what the error says
	}{
		{name: "no checkout", prefix: config.Default().BranchPrefix},
		{name: "no file at the default path", root: empty, prefix: config.Default().BranchPrefix},
		{name: "the default path", root: root, prefix: "bot/"},
		{name: "the default path named", root: root, rel: config.DefaultPath, prefix: "bot/"},
		{name: "another path that is not there", root: root, rel: "other.yml", err: "config file other.yml does not exist in the checkout"},
		{name: "an absolute path in the checkout is named relative to it", root: root, rel: filepath.Join(root, "bad.yml"), err: "bad.yml:2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(tt.root, tt.rel)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.BranchPrefix != tt.prefix {
				t.Errorf("branch prefix %q, want %q", cfg.BranchPrefix, tt.prefix)
			}
		})
	}
}

// ralph's git trusts what its API client trusts: with SSL_CERT_FILE, a bundle of the system's certificates
// and that file's, in a file of ralph's own that cleanup removes; without it, git's own default.
func TestGitRunnerTrustsSSLCertFile(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{TLS: true, GitHTTP: true})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skip("no system CA bundle at /etc/ssl/certs/ca-certificates.crt: ralph leaves git's trust alone without one")
	}
	runner, cleanup, err := GitRunner([]string{"PATH=/bin", "SSL_CERT_FILE=" + ca})
	if err != nil {
		t.Fatal(err)
	}
	if len(runner.Env) != 1 || !strings.HasPrefix(runner.Env[0], "GIT_SSL_CAINFO=") {
		t.Fatalf("the runner's env is %q, want GIT_SSL_CAINFO=<bundle>", runner.Env)
	}
	bundle := strings.TrimPrefix(runner.Env[0], "GIT_SSL_CAINFO=")
	info, err := os.Stat(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := info.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("the bundle's mode is %v, want %v", got, want)
	}
	// The transport itself: git with this runner reads the remote over the server's TLS.
	repo, err := git.Open(context.Background(), runner, filepath.Join(t.TempDir(), "git"), "", srv.GitURL(), git.Auth{Token: "test-token"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.RemoteHeads(context.Background()); err != nil {
		t.Errorf("ls-remote over HTTPS with SSL_CERT_FILE's CA: %v", err)
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(bundle)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bundle's directory is still there after cleanup: %v", err)
	}

	runner, cleanup, err = GitRunner([]string{"PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if runner.Env != nil {
		t.Errorf("without SSL_CERT_FILE the runner's env is %q, want none", runner.Env)
	}
}

// The agent's boundary reads ralph's environment as the door gives it (Door.Environ), not the process's:
// RALPH_NETWORK_FIREWALL=off there turns the owner-match rule off, in a run's boundary and in doctor's.
func TestBoundaryReadsTheDoorsEnvironment(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	door := Door{GitHub: client(t, srv, "test-token"), Token: "test-token", Config: config.Default(), Log: &testLog{},
		Environ: []string{"PATH=/usr/bin", sandbox.EnvFirewall + "=off"}}
	eng, cleanup, err := Build(context.Background(), door)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	for name, sb := range map[string]sandbox.Config{"run": eng.Sandbox, "doctor": Boundary(door)} {
		if ok, why := sandbox.FirewallSupport(sb.Getenv); ok || !strings.Contains(why, "turned off by "+sandbox.EnvFirewall+"=off") {
			t.Errorf("%s's boundary: the firewall rule %v (%s), want it turned off by the door's environment", name, ok, why)
		}
	}
}
