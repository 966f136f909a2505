package git

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Auth is the credential for talking to the remote. An empty Token means none.
type Auth struct {
	Token string
}

func (a Auth) basic() string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + a.Token))
}

// Repo is ralph's own git directory: a bare repository in a place the agent cannot write, whose object
// store borrows the objects of the user's checkout (an alternate), so that it costs little disk and a fetch
// brings only what the checkout lacks. ralph commits and pushes from here and nowhere else. Every command
// runs with the system and global git config off, hooks and fsmonitor off, and an allowlisted environment
// (see Allowed), so nothing outside this directory steers it and no secret of ralph's reaches it.
type Repo struct {
	GitDir string
	URL    string // the remote
	Runner Runner
	Auth   Auth
	// Branches is the prefix of every branch ralph may push (branch_prefix): the one place that decides where
	// a push may go, whatever its caller asks. Refs under refs/ralph/ (the locks, the day's ledger) are
	// ralph's own too. Empty: no branch may be pushed.
	Branches string
	// base is the remote's default branch once ralph has read it: never pushed, whatever the prefix.
	base string
}

// hardening is passed to every git command ralph runs. The config that could run a program or redirect a
// push is ralph's own (and empty), but these say so again on the command line, which no file overrides.
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.excludesFile=/dev/null",
	"-c", "credential.helper=",
	"-c", "protocol.ext.allow=never",
}

// baseEnv keeps git's output parseable, stops it from prompting for a password, and turns off every
// config file but the repository's own.
var baseEnv = []string{
	"LC_ALL=C", "GIT_TERMINAL_PROMPT=0",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
	"GIT_NO_REPLACE_OBJECTS=1", "GIT_OPTIONAL_LOCKS=0",
}

// Open makes (or reopens) ralph's repository at gitDir for the checkout at source: the remote is the
// checkout's origin, read from its config file alone (no include, no other config), and the checkout's
// objects are an alternate. A source of "" borrows nothing (url must then be given).
func Open(ctx context.Context, runner Runner, gitDir, source, url string, auth Auth) (*Repo, error) {
	// Commands that read a work tree run in it, where a relative GIT_DIR would be the agent's to make.
	gitDir, err := filepath.Abs(gitDir)
	if err != nil {
		return nil, err
	}
	r := &Repo{GitDir: gitDir, URL: url, Runner: runner, Auth: auth}
	// Every command runs in this directory (see run): it must exist before the first.
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating ralph's git directory: %w", err)
	}
	var common string
	if source != "" {
		c, err := CommonDir(source)
		if err != nil {
			return nil, err
		}
		common = c
		if r.URL == "" {
			out, err := r.run(ctx, "", nil, "config", "--file", filepath.Join(common, "config"), "--get", "remote.origin.url")
			if err != nil {
				return nil, fmt.Errorf("reading the remote of %s (remote.origin.url): %w", source, err)
			}
			r.URL = strings.TrimSpace(string(out))
		}
	}
	if r.URL == "" {
		return nil, errors.New("no remote: the checkout has no origin")
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		// An empty template: no sample hooks, no info/exclude.
		if _, err := r.run(ctx, "", nil, "init", "--quiet", "--bare", "--template=", gitDir); err != nil {
			return nil, fmt.Errorf("creating ralph's git directory: %w", err)
		}
	}
	alt := filepath.Join(gitDir, "objects", "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		return nil, err
	}
	content := ""
	if common != "" {
		content = filepath.Join(common, "objects") + "\n"
	}
	if err := os.WriteFile(alt, []byte(content), 0o644); err != nil {
		return nil, fmt.Errorf("writing the alternates of ralph's git directory: %w", err)
	}
	return r, nil
}

// CommonDir finds the git directory shared by the checkout's worktrees, reading .git and commondir
// files itself rather than asking git (which would read the checkout's config).
func CommonDir(source string) (string, error) {
	dot := filepath.Join(source, ".git")
	info, err := os.Stat(dot)
	if err != nil {
		return "", fmt.Errorf("%s is not a git checkout: %w", source, err)
	}
	dir := dot
	if !info.IsDir() {
		b, err := os.ReadFile(dot)
		if err != nil {
			return "", err
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return "", fmt.Errorf("%s is not a gitdir file", dot)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(source, target)
		}
		dir = target
	}
	if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		dir = c
	}
	return filepath.Abs(dir)
}

func (r *Repo) redactor() redactor {
	if r.Auth.Token == "" {
		return nil
	}
	// Longest first so that the header is replaced whole.
	return redactor{r.Auth.basic(), r.Auth.Token}
}

// run runs git on ralph's repository with the hardening options, in ralph's git directory. workTree, when
// set, is a directory git writes files into (Checkout, into a new directory no agent has seen); no command
// ralph runs reads a tree the agent could write. It removes the token from any error.
func (r *Repo) run(ctx context.Context, workTree string, env []string, args ...string) ([]byte, error) {
	return r.runInput(ctx, workTree, env, nil, args...)
}

// runInput is run with stdin as the command's standard input.
func (r *Repo) runInput(ctx context.Context, workTree string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	full := append(append([]string{}, hardening...), args...)
	e := append([]string{}, baseEnv...)
	dir := workTree
	if r.GitDir != "" {
		e = append(e, "GIT_DIR="+r.GitDir)
		if dir == "" {
			dir = r.GitDir
		}
	}
	if workTree != "" {
		e = append(e, "GIT_WORK_TREE="+workTree)
	}
	if stdin != nil {
		out, err := runInput(ctx, r.Runner, dir, append(e, env...), stdin, full...)
		return out, r.redactor().error(err)
	}
	out, err := retrying(ctx, args, func() ([]byte, error) { return r.Runner.Run(ctx, dir, append(e, env...), full...) })
	return out, r.redactor().error(err)
}

// authEnv hands git the credential through its environment (GIT_CONFIG_COUNT), never its command line,
// which any process on the machine can read in /proc.
func (r *Repo) authEnv() []string {
	if r.Auth.Token == "" {
		return nil
	}
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=AUTHORIZATION: basic " + r.Auth.basic()}
}

// RemoteHeads reads the remote's default branch and the SHAs of the given branches in one ls-remote,
// so a step learns all it needs of the remote in one round trip. A branch the remote lacks is absent from
// the map.
func (r *Repo) RemoteHeads(ctx context.Context, branches ...string) (defaultBranch string, shas map[string]string, err error) {
	args := []string{"ls-remote", "--symref", r.URL, "HEAD"}
	for _, b := range branches {
		args = append(args, "refs/heads/"+b)
	}
	out, err := r.run(ctx, "", r.authEnv(), args...)
	if err != nil {
		return "", nil, fmt.Errorf("reading the remote's branches: %w", err)
	}
	shas = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if target, ok := strings.CutPrefix(line, "ref: "); ok {
			// "ref: refs/heads/main\tHEAD"
			if ref, name, _ := strings.Cut(target, "\t"); name == "HEAD" {
				defaultBranch = strings.TrimPrefix(ref, "refs/heads/")
			}
			continue
		}
		sha, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		for _, b := range branches {
			if name == "refs/heads/"+b {
				shas[b] = sha
			}
		}
	}
	if defaultBranch == "" {
		return "", shas, errors.New("the remote did not say which branch is its default (HEAD)")
	}
	r.base = defaultBranch
	return defaultBranch, shas, nil
}

// Fetch fetches refspecs from the remote into ralph's repository.
func (r *Repo) Fetch(ctx context.Context, refspecs ...string) error {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", r.URL}, refspecs...)
	if _, err := r.run(ctx, "", r.authEnv(), args...); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

func (e *PushRejectedError) Error() string {
	return fmt.Sprintf("push to branch %s rejected: %s", e.Branch, e.Reason)
}

func (e *DestinationError) Error() string {
	return fmt.Sprintf("ralph does not push to %s: %s", e.Ref, e.Reason)
}

// FetchRef fetches ref from the remote into the same ref of ralph's repository and returns its commit;
// found is false when the remote has no such ref. It costs one round trip to the remote.
func (r *Repo) FetchRef(ctx context.Context, ref string) (sha string, found bool, err error) {
	return r.fetchAs(ctx, ref, ref)
}

// ReadRef is FetchRef that leaves no ref behind: it fetches ref under a name of its own, which it deletes
// at once, so that readers of one ref in this repository at the same time never contend for a local ref.
func (r *Repo) ReadRef(ctx context.Context, ref string) (sha string, found bool, err error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	local := "refs/ralph/read/" + hex.EncodeToString(nonce[:])
	if sha, found, err = r.fetchAs(ctx, ref, local); err != nil || !found {
		return sha, found, err
	}
	if _, err := r.run(ctx, "", nil, "update-ref", "-d", local, sha); err != nil {
		return "", false, fmt.Errorf("reading %s: %w", ref, err)
	}
	return sha, true, nil
}

// fetchAs fetches the remote's ref into local and returns its commit.
func (r *Repo) fetchAs(ctx context.Context, ref, local string) (sha string, found bool, err error) {
	if _, err := r.run(ctx, "", nil, "check-ref-format", ref); err != nil || !strings.HasPrefix(ref, "refs/") {
		return "", false, fmt.Errorf("invalid ref name %q", ref)
	}
	_, err = r.run(ctx, "", r.authEnv(), "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", r.URL, "+"+ref+":"+local)
	var ce *CommandError
	if errors.As(err, &ce) && strings.Contains(ce.Stderr, "couldn't find remote ref") {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("fetch %s: %w", ref, err)
	}
	out, err := r.run(ctx, "", nil, "rev-parse", "--verify", local+"^{commit}")
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), true, nil
}

// RemoteRefs lists the remote's refs whose names start with prefix (a directory such as
// "refs/ralph/locks/"), by name, with their objects: one ls-remote.
func (r *Repo) RemoteRefs(ctx context.Context, prefix string) (map[string]string, error) {
	if !strings.HasPrefix(prefix, "refs/") || !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("invalid ref prefix %q", prefix)
	}
	out, err := r.run(ctx, "", r.authEnv(), "ls-remote", "--refs", r.URL, prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("listing the remote's %s: %w", prefix, err)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if sha, name, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(name, prefix) {
			refs[name] = sha
		}
	}
	return refs, nil
}

// Message is a commit's message.
func (r *Repo) Message(ctx context.Context, sha string) (string, error) {
	out, err := r.run(ctx, "", nil, "cat-file", "commit", sha)
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", short(sha), err)
	}
	_, msg, _ := strings.Cut(string(out), "\n\n")
	return msg, nil
}

// KeepRef points ref of ralph's own repository at the commit sha; nothing is pushed.
func (r *Repo) KeepRef(ctx context.Context, ref, sha string) error {
	if !strings.HasPrefix(ref, "refs/") || !isSHA(sha) {
		return fmt.Errorf("keeping %s at %q: not a ref and a commit", ref, sha)
	}
	if _, err := r.run(ctx, "", nil, "update-ref", ref, sha); err != nil {
		return fmt.Errorf("keeping %s: %w", ref, err)
	}
	return nil
}

// KeptRef reads ref of ralph's own repository (KeepRef): its commit and that commit's first parent (""
// for a root commit); found is false when there is no such ref.
func (r *Repo) KeptRef(ctx context.Context, ref string) (sha, parent string, found bool, err error) {
	out, err := r.run(ctx, "", nil, "for-each-ref", "--format=%(objectname) %(parent)", ref)
	if err != nil {
		return "", "", false, fmt.Errorf("reading %s: %w", ref, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return "", "", false, nil
	}
	if len(fields) > 1 {
		parent = fields[1]
	}
	return fields[0], parent, true, nil
}

// CommitNote writes a commit that carries only its message (git's empty tree), on parent ("" for none).
func (r *Repo) CommitNote(ctx context.Context, msg, parent string, author Signature) (string, error) {
	tree, err := r.run(ctx, "", nil, "hash-object", "-t", "tree", "-w", "--stdin")
	if err == nil {
		args := []string{"commit-tree", strings.TrimSpace(string(tree)), "-m", messageArg(msg)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		var out []byte
		if out, err = r.run(ctx, "", author.env(), args...); err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("commit: %w", err)
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Signature names the author and committer of a commit.
type Signature struct {
	Name, Email string
	// Sign, when set, signs the commit: git config entries (KEY=VALUE: gpg.format, user.signingKey, the
	// signing program) taken from the person's own git config on a laptop, passed to this one command
	// through its environment (ralph's git reads no config file).
	Sign []string
}

// env sets the author and committer for one git command, without touching any config file.
func (s Signature) env() []string {
	var env []string
	if s.Name != "" {
		env = append(env, "GIT_AUTHOR_NAME="+s.Name, "GIT_COMMITTER_NAME="+s.Name)
	}
	if s.Email != "" {
		env = append(env, "GIT_AUTHOR_EMAIL="+s.Email, "GIT_COMMITTER_EMAIL="+s.Email)
	}
	if len(s.Sign) > 0 {
		env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(s.Sign)))
		for i, kv := range s.Sign {
			k, v, _ := strings.Cut(kv, "=")
			env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, v))
		}
	}
	return env
}
