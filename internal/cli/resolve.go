package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cli/go-gh/v2/pkg/auth"
	"github.com/cli/go-gh/v2/pkg/repository"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/lock"
)

// session is one repository on one host, with a client that holds the token.
type session struct {
	f     *Factory
	host  string
	owner string
	name  string
	token string
	gh    *ghapi.Client
	// transport is how gh ralph reaches the network (proxies, CA bundle): GitHub, the board, the model.
	transport http.RoundTripper
	// closers run when the command ends (release).
	closers []func()
}

func (s *session) fullName() string { return s.owner + "/" + s.name }

// host is the GitHub host gh would use when the repository does not name one.
func (f *Factory) host() string {
	if h := strings.TrimSpace(f.Getenv("GH_HOST")); h != "" {
		return h
	}
	configured := f.ConfiguredHost
	if configured == nil {
		configured = func() string {
			h, src := auth.DefaultHost()
			if src == "default" {
				return ""
			}
			return h
		}
	}
	if h := configured(); h != "" {
		return h
	}
	return "github.com"
}

// repo resolves the repository: -R, then GH_REPO, then the current directory's git remotes (as gh does).
func (f *Factory) repo(flag string) (repository.Repository, error) {
	for _, v := range []struct{ name, value string }{{"--repo", flag}, {"GH_REPO", f.Getenv("GH_REPO")}} {
		if v.value == "" {
			continue
		}
		r, err := repository.ParseWithHost(v.value, f.host())
		if err != nil {
			return r, fmt.Errorf("%s %q: %w", v.name, v.value, err)
		}
		return r, nil
	}
	fromRemotes := f.RepoFromRemotes
	if fromRemotes == nil {
		fromRemotes = repository.Current
	}
	r, err := fromRemotes()
	if err != nil {
		return r, fmt.Errorf("%w; run gh ralph inside a clone of the repository, or pass -R OWNER/REPO", err)
	}
	return r, nil
}

// token finds the token for host as gh does: GH_TOKEN and GITHUB_TOKEN for github.com (and GHE.com),
// GH_ENTERPRISE_TOKEN and GITHUB_ENTERPRISE_TOKEN for Enterprise Server hosts, then gh's stored login.
func (f *Factory) token(host string) string {
	names := []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}
	if !auth.IsEnterprise(host) {
		names = []string{"GH_TOKEN", "GITHUB_TOKEN"}
	}
	for _, n := range names {
		if t := strings.TrimSpace(f.Getenv(n)); t != "" {
			return t
		}
	}
	stored := f.StoredToken
	if stored == nil {
		stored = func(host string) string { t, _ := auth.TokenForHost(host); return t }
	}
	return stored(host)
}

// session resolves host, repository and token and makes the client.
func (f *Factory) session(repoFlag string) (*session, error) {
	r, err := f.repo(repoFlag)
	if err != nil {
		// Not logged in anywhere, gh knows no host, so a clone's github.com remote names no repository it
		// knows: what is wrong is the login, and gh says so first.
		if h := f.host(); f.token(h) == "" {
			return nil, &ghapi.AuthError{Host: h, Err: errors.New("not logged in to GitHub"), Hint: authHint(h, f.Getenv)}
		}
		return nil, err
	}
	tok := f.token(r.Host)
	if tok == "" {
		return nil, &ghapi.AuthError{Host: r.Host, Err: fmt.Errorf("no GitHub token for %s", r.Host), Hint: authHint(r.Host, f.Getenv)}
	}
	transport, err := ghapi.DefaultTransport(f.Getenv)
	if err != nil {
		return nil, err
	}
	gh, err := ghapi.New(ghapi.Options{Endpoints: ghapi.ForHost(r.Host), Token: tok, Owner: r.Owner, Repo: r.Name, Transport: transport})
	if err != nil {
		return nil, err
	}
	return &session{f: f, host: r.Host, owner: r.Owner, name: r.Name, token: tok, gh: gh, transport: transport}, nil
}

// gitOut runs git in dir and returns its trimmed output.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// checkout finds the top level of the user's checkout.
func (f *Factory) checkout(ctx context.Context) (string, error) {
	dir := f.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	root, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("not in a git checkout (%v): run gh ralph inside a clone of the repository", err)
	}
	return root, nil
}

// configOrDefault is the checkout's config when there is a checkout (status and sweep work without one).
func (s *session) configOrDefault(ctx context.Context) (config.Config, error) {
	root, err := s.f.checkout(ctx)
	if err != nil {
		return config.Default(), nil
	}
	return s.loadConfig(ctx, root)
}

// loadConfig is the checkout's config, read only when ralph's own files there are the default branch's
// (ralphFilesOfDefaultBranch). Every command that may run a step, or says what one would do, reads it so.
func (s *session) loadConfig(ctx context.Context, root string) (config.Config, error) {
	if root != "" {
		if err := s.ralphFilesOfDefaultBranch(ctx, root); err != nil {
			return config.Config{}, err
		}
	}
	return compose.LoadConfig(root, "")
}

// ralphFilesOfDefaultBranch refuses a checkout whose HEAD holds ralph's own files (its config and prompts,
// config.RalphPaths) otherwise than the default branch did where HEAD left it (their merge base): a branch
// someone else wrote, checked out here (gh pr checkout of a fork's pull request), would direct ralph as
// the person running it, with their environment and keys: agent.command runs a program of theirs,
// gateway.upstream sends the model key to their host, a prompt template is their instructions. What the
// person changed and did not commit is theirs, and read. Only git's plumbing runs, on commits: nothing
// of the work tree is consulted.
func (s *session) ralphFilesOfDefaultBranch(ctx context.Context, root string) error {
	if _, err := gitOut(ctx, root, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return nil // no commit yet: every file there is the person's
	}
	name, base := "", ""
	if ref, err := gitOut(ctx, root, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil {
		name, base = strings.TrimPrefix(ref, "refs/remotes/origin/"), ref
	} else {
		repo, err := s.gh.Repository(ctx)
		if err != nil {
			return fmt.Errorf("finding the default branch of %s: %w", s.fullName(), err)
		}
		name, base = repo.DefaultBranch, "refs/remotes/origin/"+repo.DefaultBranch
	}
	if _, err := gitOut(ctx, root, "rev-parse", "--verify", "-q", base+"^{commit}"); err != nil {
		return fmt.Errorf("your checkout has no %s (origin's default branch), so ralph cannot tell whether its config and prompts here are the default branch's: run git fetch origin", base)
	}
	mb, err := gitOut(ctx, root, "merge-base", "HEAD", base)
	if err != nil {
		mb = ""
	}
	head, err := ralphEntries(ctx, root, "HEAD")
	if err != nil {
		return err
	}
	old := map[string]string{}
	if mb != "" {
		if old, err = ralphEntries(ctx, root, mb); err != nil {
			return err
		}
	}
	var changed []string
	for p, e := range head {
		if old[p] != e {
			changed = append(changed, p)
		}
	}
	for p := range old {
		if _, ok := head[p]; !ok {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	branch, _ := gitOut(ctx, root, "rev-parse", "--abbrev-ref", "HEAD")
	return &foreignFilesError{
		Msg: fmt.Sprintf("your checkout's HEAD (%s) changes ralph's own files from the default branch (%s): %s; ralph reads its config and prompts only as the default branch holds them (with your uncommitted edits), since a branch someone else wrote, checked out here, would direct ralph as you (run a program, send your model key elsewhere)",
			branch, name, strings.Join(changed, ", ")),
		Fix: fmt.Sprintf("check out %s (or a branch of yours that leaves them alone), or merge the change to %s first", name, name),
	}
}

// foreignFilesError: the checkout's ralph files are not the default branch's (ralphFilesOfDefaultBranch).
type foreignFilesError struct{ Msg, Fix string }

func (e *foreignFilesError) Error() string {
	return e.Msg + ". " + strings.ToUpper(e.Fix[:1]) + e.Fix[1:]
}

// ralphEntries are the tree entries of ralph's own files at rev (mode, type and object of each, by
// path), and what .github itself is there (a directory, or a link that would lead the reading elsewhere).
func ralphEntries(ctx context.Context, root, rev string) (map[string]string, error) {
	out := map[string]string{}
	top, err := gitOut(ctx, root, "ls-tree", "--full-tree", rev, "--", ".github")
	if err != nil {
		return nil, err
	}
	if top != "" {
		mode, _, _ := strings.Cut(top, " ")
		out[".github"] = mode
	}
	args := []string{"ls-tree", "-r", "--full-tree", rev, "--"}
	for _, p := range config.RalphPaths { // a file, or a directory's "dir/**": ls-tree -r lists what is below it
		args = append(args, strings.TrimSuffix(p, "/**"))
	}
	list, err := gitOut(ctx, root, args...)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(list, "\n") {
		entry, path, ok := strings.Cut(line, "\t")
		if ok {
			out[path] = entry
		}
	}
	return out, nil
}

// author is the user's git identity, for the commits ralph makes here.
func author(ctx context.Context, root string) git.Signature {
	name, _ := gitOut(ctx, root, "config", "user.name")
	email, _ := gitOut(ctx, root, "config", "user.email")
	if name == "" || email == "" {
		return git.Signature{Name: "ralph", Email: "ralph@users.noreply.github.com"}
	}
	return git.Signature{Name: name, Email: email}
}

// pushToken is the token for `git push` when origin is an https remote on the session's host; otherwise the
// user's own git credentials (ssh keys, a credential helper) do, and the token goes nowhere else.
func (s *session) pushToken(ctx context.Context, root string) string {
	origin, err := gitOut(ctx, root, "remote", "get-url", "origin")
	if err != nil {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Host, s.host) {
		return ""
	}
	return s.token
}

// engineFor builds the engine as the Action does, from the user's checkout. A person's action (approve,
// reject, retry) runs no step, so it works outside a checkout too, on the default config.
func (s *session) engineFor(ctx context.Context, log engine.Logger, dryRun, needCheckout bool) (*engine.Engine, error) {
	root, err := s.f.checkout(ctx)
	if err != nil && needCheckout {
		return nil, err
	}
	cfg, err := s.loadConfig(ctx, root)
	if err != nil {
		return nil, err
	}
	eng, cleanup, err := compose.Build(ctx, s.door(ctx, root, cfg, log, dryRun))
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, cleanup)
	return eng, nil
}

// door is what gh ralph gives the engine: the user's gh token (which also pushes, over https to the
// session's host, and reaches the project board), the user's git identity, this process as the lock's
// holder, the Factory's clock; ralph's repository is kept in the user's cache directory (see workspace).
func (s *session) door(ctx context.Context, root string, cfg config.Config, log engine.Logger, dryRun bool) compose.Door {
	hostname, _ := os.Hostname()
	d := s.agentDoor(root, cfg)
	d.GitHub, d.Token, d.Log = s.gh, s.token, log
	d.Holder = lock.LocalHolder(s.f.Getenv("USER"))
	d.Origin = engine.Origin{Label: fmt.Sprintf("gh ralph on %s (pid %d)", hostname, os.Getpid())}
	d.Author = author(ctx, root)
	// The board is reached with the same token; one without the project scope is told what to do.
	d.Transport, d.ProjectToken, d.ProjectHint = s.transport, s.token, scopeHint
	d.Now, d.DryRun = s.f.Now, dryRun
	if root != "" {
		d.PushAuth = git.Auth{Token: s.pushToken(ctx, root)}
		// ralph's commits here follow the person's git signing, as their own would.
		sig := readSigning(ctx, root)
		d.Author.Sign, d.Signing = sig.config(), sig.engine()
	}
	return d
}

// agentDoor is what of the door decides where the agent runs and what it may reach: the checkout, the
// config, the environment, the directories it may write or read. doctor checks the agent against the
// boundary it gives (compose.Boundary), a step runs in the one Build makes of it.
func (s *session) agentDoor(root string, cfg config.Config) compose.Door {
	return compose.Door{
		Config: cfg, Checkout: root,
		Writable: filepath.SplitList(s.f.Getenv("RALPH_AGENT_WRITABLE")),
		ReadOnly: filepath.SplitList(s.f.Getenv("RALPH_AGENT_READABLE")),
		Environ:  s.f.Environ(),
		// As root, the toolchains under the person's home (pyenv, nvm, …) are the agent's, read-only.
		HomeToolchains: true,
	}
}

// login is the person running gh ralph.
func (s *session) login(ctx context.Context) (string, error) {
	u, err := s.gh.CurrentUser(ctx)
	if err != nil {
		return "", fmt.Errorf("finding who you are on %s: %w", s.host, err)
	}
	return u.Login, nil
}

// release removes what the session's runs made that is not kept (as root, the run's temporary places).
func (s *session) release() {
	for _, c := range s.closers {
		c()
	}
	s.closers = nil
}
