// Package compose builds ralph's engine for both doors, the GitHub Action and gh ralph: the one place that
// wires the config, ralph's repository and the agent's boundary, the agent, the lock, the project board and
// the model gateway's transport together. A door says only what differs (a Door).
package compose

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/project"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/sweep"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// GitHub is what the engine and its lock need of GitHub, and what Build asks of it itself (who may drive
// ralph, which account the token is, where the GraphQL API is); *ghapi.Client implements it.
type GitHub interface {
	engine.GitHub
	lock.API
	lock.Runs
	Permission(ctx context.Context, login string) (string, error)
	Viewer(ctx context.Context) (string, error)
	Endpoints() ghapi.Endpoints
}

var _ GitHub = (*ghapi.Client)(nil)

// Door is what one door gives the engine: everything in which the Action and gh ralph differ.
type Door struct {
	GitHub GitHub
	// Token is ralph's GitHub token: the agent never sees it (nor a value holding it).
	Token string
	// Config is the repository's config (LoadConfig).
	Config config.Config
	// Checkout is the top level of the repository's checkout; "": none (ralph's repository is not opened,
	// so no step can run, and the prompts are the built-in ones).
	Checkout string
	// PushAuth is how ralph's repository pushes to GitHub.
	PushAuth git.Auth
	// Writable are more directories the agent may write (RALPH_AGENT_WRITABLE).
	Writable []string
	// ReadOnly are more paths the agent may read and run but not write (RALPH_AGENT_READABLE).
	ReadOnly []string
	Log      engine.Logger
	// Holder is who holds the issue locks this run takes.
	Holder lock.Holder
	Origin engine.Origin
	// Author writes ralph's commits; its Sign, when set, signs those of the issues' branches (the locks
	// and the day's ledger, ralph's own refs, are not signed). Signing says so to the rules ralph reads.
	Author  git.Signature
	Signing engine.Signing
	// SignedCommits has GitHub make ralph's commits on the issues' branches, which it signs (the Action).
	SignedCommits bool
	// Environ is ralph's environment, which the agent's starts from.
	Environ []string
	// HomeToolchains shows the agent's uid, read-only, the toolchains installed under HOME when HOME is
	// closed to it (gh ralph as root on a person's machine; not the Action's runner).
	HomeToolchains bool
	// Transport is how ralph reaches the network (proxies, CA bundle): the model's vendor and the
	// project board.
	Transport http.RoundTripper
	// ProjectToken reaches the config's project board; "": the board is not updated. It is kept from the
	// agent as Token is.
	ProjectToken string
	// ProjectHint, when set, is what to do when ProjectToken cannot reach the board: the first refusal is
	// reported with it and the board is left alone after that.
	ProjectHint string
	Now         func() time.Time
	Checkpoint  func(name string)
	DryRun      bool
}

// Boundary is the agent's boundary for a door on this machine as Build sets it up, without the places a
// run makes: as root, a user of the agent's own (a run picks its uid when it opens its places; this one
// stands for it: none of them owns anything), with the toolchains under HOME shown to it; otherwise
// ralph's own user. gh ralph doctor checks the agent's program and verify's against it, as a run's
// doctor.Start checks them against Build's, so both say the same of what the agent's user can run.
func Boundary(d Door) sandbox.Config {
	sb := sandbox.Config{RequireLandlock: d.Config.Agent.Landlock == config.LandlockRequired, ReapDescendants: true,
		Writable: d.Writable, ReadOnly: d.ReadOnly}
	if d.Checkout != "" && os.Geteuid() == 0 { // as workspace.NewPlaces chooses
		sb.Separate, sb.UID, sb.GID = true, sandbox.AgentUID, sandbox.AgentGID
	}
	return finishBoundary(d, sb)
}

// finishBoundary adds to the boundary of a run's places what the door and the config say of it: the
// toolchains under HOME, the network.
func finishBoundary(d Door, sb sandbox.Config) sandbox.Config {
	if d.HomeToolchains && sb.Separate {
		sb.Home, sb.HomeTools = workspace.HomeTools(agent.Getenv(d.Environ, "HOME"), sb.UID, sb.GID)
	}
	sb.Network = NetworkBoundary(d.Config)
	sb.Getenv = func(key string) string { return agent.Getenv(d.Environ, key) }
	return sb
}

// Build makes the engine a door asked for. cleanup removes the run's temporary places (as root, the
// agent's user's); call it when the run ends.
func Build(ctx context.Context, d Door) (eng *engine.Engine, cleanup func(), err error) {
	cfg := d.Config
	cleanup = func() {}
	var store *workspace.Store
	sb := sandbox.Config{RequireLandlock: cfg.Agent.Landlock == config.LandlockRequired, ReapDescendants: true}
	if d.Checkout != "" {
		runner, closeRunner, err := GitRunner(d.Environ)
		if err != nil {
			return nil, nil, err
		}
		var closePlaces func() error
		store, sb, closePlaces, err = workspace.Setup{
			Checkout: d.Checkout, Auth: d.PushAuth, Protected: cfg.ProtectedBy, Branches: cfg.BranchPrefix, Writable: d.Writable, ReadOnly: d.ReadOnly,
			RequireLandlock: cfg.Agent.Landlock == config.LandlockRequired, Runner: runner,
			Getenv: func(key string) string { return agent.Getenv(d.Environ, key) },
		}.Open(ctx)
		if err != nil {
			closeRunner()
			return nil, nil, err
		}
		if c, ok := d.GitHub.(*ghapi.Client); ok && d.SignedCommits {
			store.PublishWith(publisher{gh: c, prefix: cfg.BranchPrefix})
		}
		cleanup = func() {
			if err := closePlaces(); err != nil {
				d.Log.Warnf("removing ralph's temporary files: %v", err)
			}
			closeRunner()
		}
	}
	sb = finishBoundary(d, sb)
	runner, agentErr := agent.New(cfg.Agent, func(key string) string { return agent.Getenv(d.Environ, key) })
	secrets := []string{d.Token}
	if d.ProjectToken != "" && d.ProjectToken != d.Token {
		secrets = append(secrets, d.ProjectToken)
	}
	unsigned := d.Author
	unsigned.Sign = nil
	eng = engine.New(engine.Engine{
		GitHub:     d.GitHub,
		Workspaces: store,
		Sandbox:    sb,
		Agent:      runner,
		AgentErr:   agentErr,
		Config:     cfg,
		Prompts:    prompts.New(d.Checkout),
		// The atomic lock, a ref on GitHub, held in the name of this run.
		Lock: locker{&lock.Locker{Refs: lockRefs(d.GitHub, store, unsigned), Runs: d.GitHub, Holder: d.Holder,
			Lease: cfg.LockLease, Warnf: d.Log.Warnf}},
		Auth:     engine.PermissionAuthorizer{Permission: d.GitHub.Permission, AllowedBots: cfg.AllowedBots},
		Identity: engine.OnceIdentity(d.GitHub.Viewer),
		Log:      d.Log,
		Origin:   d.Origin,
		Author:   d.Author,
		Signing:  d.Signing,
		AgentEnv: d.Environ,
		Secrets:  secrets,
		Now:      d.Now,
		DryRun:   d.DryRun,
		// The model gateway reaches the vendor as ralph reaches GitHub; the day's spending is shared
		// through ralph's repository (refs/ralph/budget/day).
		ModelTransport: d.Transport,
		Checkpoint:     d.Checkpoint,
	})
	if store != nil {
		eng.Ledger = &ledger.Ledger{Repo: store.Repo(), Author: unsigned, Now: d.Now}
	}
	if cfg.Project != nil && d.ProjectToken != "" {
		b, err := Board(cfg, d.GitHub.Endpoints(), d.ProjectToken, d.Transport)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		eng.OnState = onState(b, d.ProjectHint)
	}
	return eng, cleanup, nil
}

// NetworkBoundary is the agent's network as the config asks for it: the allow-list (its ports are the
// run's, the engine adds them), or nil with network.mode: open.
func NetworkBoundary(cfg config.Config) *sandbox.Network {
	if cfg.Network.Mode == config.NetworkOpen {
		return nil
	}
	return &sandbox.Network{RequireKernel: cfg.Network.RequireKernel}
}

// GitRunner is ralph's git for both doors (and doctor's try of the transport): git's environment is the
// allowlist of git.ExecRunner and, when SSL_CERT_FILE is set in environ, git trusts exactly what ralph's
// API client trusts (ghapi.DefaultTransport): the system bundle and SSL_CERT_FILE's certificates, written
// to a file of this run's own (0600, in a directory only ralph's user may enter) and given to git as
// GIT_SSL_CAINFO. Debian's git, built with GnuTLS, ignores SSL_CERT_FILE: without this, a host with a
// private CA answered the API and refused ralph's push. cleanup removes the file.
func GitRunner(environ []string) (runner git.ExecRunner, cleanup func(), err error) {
	cleanup = func() {}
	bundle, err := ghapi.CABundle(func(key string) string { return agent.Getenv(environ, key) })
	if err != nil || bundle == nil {
		return git.ExecRunner{}, cleanup, err
	}
	dir, err := os.MkdirTemp("", "ralph-ca-")
	if err != nil {
		return git.ExecRunner{}, cleanup, fmt.Errorf("writing the CA bundle for git: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, "ca-bundle.pem")
	if err := os.WriteFile(path, bundle, 0o600); err != nil {
		cleanup()
		return git.ExecRunner{}, func() {}, fmt.Errorf("writing the CA bundle for git: %w", err)
	}
	return git.ExecRunner{Env: []string{"GIT_SSL_CAINFO=" + path}}, cleanup, nil
}

// Board is the config's project board, reached with token.
func Board(cfg config.Config, endpoints ghapi.Endpoints, token string, transport http.RoundTripper) (*project.Board, error) {
	return project.New(project.Options{GraphQL: endpoints.GraphQL, Token: token, Transport: transport,
		Owner: cfg.Project.Owner, Number: cfg.Project.Number, Field: cfg.Project.Field})
}

// onState mirrors every state change on the board. With a hint, a token that cannot reach the board is
// reported once, with the hint, and the board is left alone after that.
func onState(b *project.Board, hint string) func(ctx context.Context, issueNodeID string, n int, to workflow.State) error {
	if hint == "" {
		return func(ctx context.Context, issueNodeID string, _ int, to workflow.State) error {
			return b.SetState(ctx, issueNodeID, to)
		}
	}
	var denied atomic.Bool
	return func(ctx context.Context, issueNodeID string, _ int, to workflow.State) error {
		if denied.Load() {
			return nil
		}
		err := b.SetState(ctx, issueNodeID, to)
		if errors.Is(err, project.ErrNoAccess) {
			denied.Store(true)
			return fmt.Errorf("%w; %s", err, hint)
		}
		return err
	}
}

// locker is the lock as the engine takes it: lock's own HeldError becomes the engine's.
type locker struct{ *lock.Locker }

var _ engine.Locker = locker{}

func (l locker) Acquire(ctx context.Context, issue int) (engine.Lease, error) {
	ls, err := l.Locker.Acquire(ctx, issue)
	var held *lock.HeldError
	if errors.As(err, &held) {
		return nil, &engine.HeldError{Holder: held.Holder}
	}
	if err != nil {
		return nil, err
	}
	return ls, nil
}

// lockRefs keeps the lock refs with git, from ralph's repository (no API request), or, with no checkout
// (a person's approve, reject or retry), where there is none, through the REST git API.
func lockRefs(gh GitHub, store *workspace.Store, author git.Signature) lock.Refs {
	if store == nil {
		return lock.RESTRefs{API: gh}
	}
	return lock.GitRefs{Repo: store.Repo(), Author: author}
}

// SweepLocks fills a sweep's view of the engine's issue locks: which issues have one (one git ls-remote)
// and whether a lock's holder still lives. Nothing when the engine takes no lock of its own.
func SweepLocks(eng *engine.Engine, opts *sweep.Options) {
	if l, ok := eng.Lock.(locker); ok {
		opts.Locks, opts.Locked = l.Live, l.Locked
	}
}

// LoadConfig reads the config at rel (config.DefaultPath when "") in the checkout at root, naming it
// relative to the checkout in errors (as annotations need). No file at the default path, or no checkout:
// the defaults.
func LoadConfig(root, rel string) (config.Config, error) {
	if root == "" {
		return config.Default(), nil
	}
	if rel == "" {
		rel = config.DefaultPath
	}
	if filepath.IsAbs(rel) {
		if r, err := filepath.Rel(root, rel); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	b, err := os.ReadFile(filepath.Join(root, rel))
	if errors.Is(err, os.ErrNotExist) {
		if rel != config.DefaultPath {
			return config.Config{}, fmt.Errorf("config file %s does not exist in the checkout", rel)
		}
		return config.Default(), nil
	}
	if err != nil {
		return config.Config{}, fmt.Errorf("reading %s: %w", rel, err)
	}
	cfg, err := config.Parse(filepath.ToSlash(rel), b)
	if err != nil {
		return config.Config{}, err
	}
	if rel != config.DefaultPath {
		cfg.File = filepath.ToSlash(rel) // protected too (config.RalphPaths)
	}
	return cfg, nil
}
