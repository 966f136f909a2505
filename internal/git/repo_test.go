package git

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	if f.repo.URL != f.origin {
		t.Errorf("URL = %q, want the checkout's origin %q", f.repo.URL, f.origin)
	}
	// The checkout's objects are borrowed: its commit is readable in ralph's repository without a fetch.
	if got := f.ralph(t, "rev-parse", "--verify", f.base+"^{commit}"); got != f.base {
		t.Errorf("base commit in ralph's repository = %q, want %q", got, f.base)
	}
	// No sample hooks, no info/exclude: nothing of git's template.
	if _, err := os.Stat(filepath.Join(f.repo.GitDir, "hooks")); err == nil {
		t.Error("ralph's repository has a hooks directory")
	}
	// Reopening keeps what is there.
	sha := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	again, err := Open(ctx, f.runner, f.repo.GitDir, f.checkout, "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ralph(t, "cat-file", "-t", sha); got != "commit" || again.URL != f.origin {
		t.Errorf("after reopening: object %s is %q, URL %q", sha, got, again.URL)
	}

	// The checkout's config is read alone: an include there does not change the remote.
	inc := filepath.Join(f.root, "include.cfg")
	writeFile(t, inc, "[remote \"origin\"]\n\turl = /elsewhere.git\n")
	f.git(t, f.checkout, "config", "include.path", inc)
	withInclude, err := Open(ctx, f.runner, filepath.Join(t.TempDir(), "r.git"), f.checkout, "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	if withInclude.URL != f.origin {
		t.Errorf("URL with an include in the checkout's config = %q, want %q", withInclude.URL, f.origin)
	}

	// A linked worktree of the checkout (.git is a file) borrows the common objects.
	wt := filepath.Join(f.root, "linked")
	f.git(t, f.checkout, "worktree", "add", "--quiet", "--detach", wt)
	linked, err := Open(ctx, f.runner, filepath.Join(t.TempDir(), "l.git"), wt, "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	alt, err := os.ReadFile(filepath.Join(linked.GitDir, "objects", "info", "alternates"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(alt)), filepath.Join(f.checkout, ".git", "objects"); got != want {
		t.Errorf("alternates of a linked worktree = %q, want %q", got, want)
	}

	if _, err := Open(ctx, f.runner, filepath.Join(t.TempDir(), "x.git"), "", "", Auth{}); err == nil {
		t.Error("Open with neither a checkout nor a URL succeeded")
	}
	if _, err := Open(ctx, f.runner, filepath.Join(t.TempDir(), "y.git"), t.TempDir(), "", Auth{}); err == nil {
		t.Error("Open on a directory that is not a checkout succeeded")
	}
}

func TestRemoteHeadsAndFetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	// Someone else pushes a branch that neither the checkout nor ralph has.
	other := filepath.Join(f.root, "other")
	f.git(t, f.root, "clone", "--quiet", f.origin, other)
	writeFile(t, filepath.Join(other, "theirs.txt"), "x\n")
	f.git(t, other, "add", ".")
	f.git(t, other, "commit", "--quiet", "-m", "theirs")
	theirs := f.git(t, other, "rev-parse", "HEAD")
	f.git(t, other, "push", "--quiet", "origin", "HEAD:refs/heads/ralph/issue-12", "HEAD:refs/heads/prefix/ralph/issue-12")

	def, heads, err := f.repo.RemoteHeads(ctx, "ralph/issue-12", "main", "issue-12", "ralph/issue-99")
	if err != nil {
		t.Fatal(err)
	}
	if def != "main" {
		t.Errorf("default branch = %q, want main", def)
	}
	if diff := cmp.Diff(map[string]string{"ralph/issue-12": theirs, "main": f.base}, heads); diff != "" {
		t.Errorf("RemoteHeads (-want +got):\n%s", diff)
	}

	if err := f.repo.Fetch(ctx, "+refs/heads/ralph/issue-12:refs/remotes/origin/ralph/issue-12"); err != nil {
		t.Fatal(err)
	}
	if got := f.ralph(t, "rev-parse", "refs/remotes/origin/ralph/issue-12"); got != theirs {
		t.Errorf("fetched ref = %s, want %s", got, theirs)
	}
	if err := f.repo.Fetch(ctx, "+refs/heads/nope:refs/remotes/origin/nope"); err == nil {
		t.Error("fetching a branch the remote lacks succeeded")
	}
}

func TestPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	first := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	second := f.commitFile(t, f.repo, first, "b.txt", "b\n", "b")
	const branch = "ralph/issue-9"

	steps := []struct {
		name         string
		sha, lease   string
		wantRejected bool
		wantRemote   string
	}{
		{"create the branch", first, "", false, first},
		{"repeat the same push", first, "", false, first},
		{"must not exist but does", second, "", true, first},
		{"stale lease", second, f.base, true, first},
		{"right lease", second, first, false, second},
		{"repeat with the old lease", second, first, false, second},
		{"going back with a stale lease", first, first, true, second},
		{"going back with the right lease", first, second, false, first},
	}
	for _, s := range steps {
		err := f.repo.Push(ctx, s.sha, branch, s.lease)
		var rejected *PushRejectedError
		if got := errors.As(err, &rejected); got != s.wantRejected || (!s.wantRejected && err != nil) {
			t.Errorf("%s: Push = %v, want rejected: %v", s.name, err, s.wantRejected)
		}
		if rejected != nil && (rejected.Branch != branch || rejected.Reason == "") {
			t.Errorf("%s: rejection = %+v", s.name, rejected)
		}
		if s.wantRejected && rejected != nil && s.lease != "" && !strings.Contains(rejected.Reason, "stale info") {
			t.Errorf("%s: reason = %q, want stale info", s.name, rejected.Reason)
		}
		if got := f.remoteSHA(t, f.origin, branch); got != s.wantRemote {
			t.Errorf("%s: remote branch = %s, want %s", s.name, got, s.wantRemote)
		}
	}
	// Nothing but the one branch was pushed: no other ref, no tag.
	if got := f.git(t, f.origin, "for-each-ref", "--format=%(refname)"); got != "refs/heads/main\nrefs/heads/"+branch {
		t.Errorf("remote refs = %q", got)
	}

	for _, bad := range []struct{ sha, branch string }{
		{first, "bad..name"},
		{first, "-x"},
		{first, ""},
		{"HEAD", "ralph/x"},
		{"main", "ralph/x"},
		{first[:12], "ralph/x"},
		{strings.ToUpper(first), "ralph/x"},
	} {
		if err := f.repo.Push(ctx, bad.sha, bad.branch, ""); err == nil {
			t.Errorf("Push(%q, %q) succeeded", bad.sha, bad.branch)
		}
	}
	if got := f.git(t, f.origin, "for-each-ref", "--format=%(refname)"); strings.Contains(got, "ralph/x") {
		t.Errorf("an invalid push reached the remote: %q", got)
	}
}

func TestPushRejectedByRemoteHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	writeScript(t, filepath.Join(f.origin, "hooks", "pre-receive"), "echo protected branch >&2\nexit 1")
	sha := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	err := f.repo.Push(ctx, sha, "ralph/issue-10", "")
	var rejected *PushRejectedError
	if !errors.As(err, &rejected) || !strings.Contains(rejected.Reason, "pre-receive hook declined") {
		t.Errorf("Push = %v, want a *PushRejectedError for the declined hook", err)
	}
}

func TestPushToMissingRemoteIsNotRejection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sha := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	r := *f.repo
	r.URL = filepath.Join(t.TempDir(), "missing.git")
	err := r.Push(ctx, sha, "ralph/issue-11", "")
	var rejected *PushRejectedError
	if err == nil || errors.As(err, &rejected) {
		t.Errorf("Push to a missing remote = %v, want a plain error", err)
	}
}

// TestTokenOnlyInEnvironment: the token is never on a command line (which any process can read in /proc)
// and is handed only to the commands that talk to the remote.
func TestTokenOnlyInEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const token = "ghs_TopSecretToken123"
	b64 := basic(token)
	rec := &recordingRunner{next: f.runner}
	r, err := Open(ctx, rec, filepath.Join(t.TempDir(), "ralph.git"), f.checkout, "", Auth{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	r.Branches = "ralph/"
	if _, _, err := r.RemoteHeads(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if err := r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, f.base); err != nil {
		t.Fatal(err)
	}
	if err := r.AddBlob(ctx, index, "a.txt", []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddBlob(ctx, index, "b.txt", []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitTree(ctx, tree, f.base, "a\n\nRalph-Step: x", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, sha, "ralph/issue-13", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Changes(ctx, f.base, sha); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Diff(ctx, f.base, sha); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.FindTrailer(ctx, sha, f.base, "Ralph-Step", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.File(ctx, sha, "a.txt", 100); err != nil {
		t.Fatal(err)
	}
	if err := r.InitCopy(ctx, wt, index, sha); err != nil {
		t.Fatal(err)
	}

	wantEnv := "GIT_CONFIG_VALUE_0=AUTHORIZATION: basic " + b64
	network := map[string]bool{"push": true, "fetch": true, "ls-remote": true}
	seen := map[string]bool{}
	for _, c := range rec.recorded() {
		sub := subcommand(c.args)
		for _, a := range c.args {
			if strings.Contains(a, token) || strings.Contains(a, b64) {
				t.Errorf("git %s: the token is on the command line: %q", sub, a)
			}
		}
		has := false
		for _, e := range c.env {
			if e == wantEnv {
				has = true
			} else if strings.Contains(e, token) || strings.Contains(e, b64) {
				t.Errorf("git %s: the token is in %q", sub, e)
			}
		}
		if has != network[sub] {
			t.Errorf("git %s: credential in the environment = %v, want %v", sub, has, network[sub])
		}
		// Only Checkout (read-tree -u, into a new directory) has a work tree; every other command runs in
		// ralph's own git directory.
		for _, e := range c.env {
			if strings.HasPrefix(e, "GIT_WORK_TREE=") && sub != "read-tree" {
				t.Errorf("git %s runs with a work tree: %s", sub, e)
			}
		}
		if c.dir != r.GitDir && sub != "read-tree" {
			t.Errorf("git %s runs in %q, not ralph's git directory", sub, c.dir)
		}
		if network[sub] {
			seen[sub] = true
		}
	}
	if diff := cmp.Diff(network, seen); diff != "" {
		t.Errorf("network commands seen (-want +got):\n%s", diff)
	}
	// Nor is it written anywhere in ralph's repository (or the agent's copy).
	for _, dir := range []string{r.GitDir, wt} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), token) || strings.Contains(string(b), b64) {
				t.Errorf("the token is stored in %s", p)
			}
			return nil
		})
	}
}

// TestHTTPRemoteNeedsToken talks to a real smart-HTTP server (git http-backend) that demands the header
// GitHub demands: the token works for every network command, and nothing works without it.
func TestHTTPRemoteNeedsToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	execPath := runGit(t, setupEnv(f.home), "", "--exec-path")
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend is not available: %v", err)
	}
	f.git(t, f.origin, "config", "http.receivepack", "true")
	const token = "ghs_HTTPToken789"
	cgiHandler := &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + f.home, "GIT_CONFIG_NOSYSTEM=1",
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "x-access-token" || pass != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/origin.git"

	tests := []struct {
		name   string
		token  string
		wantOK bool
	}{
		{"right token", token, true},
		{"no token", "", false},
		{"wrong token", "ghs_WrongToken000", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The checkout's objects are borrowed, so a commit can be built even when the fetch fails.
			r, err := Open(ctx, f.runner, filepath.Join(t.TempDir(), "ralph.git"), f.checkout, url, Auth{Token: tt.token})
			if err != nil {
				t.Fatal(err)
			}
			r.Branches = "ralph/"
			_, heads, err := r.RemoteHeads(ctx, "main")
			if (err == nil) != tt.wantOK || (tt.wantOK && heads["main"] != f.base) {
				t.Errorf("RemoteHeads = %v, %v; want ok %v", heads, err, tt.wantOK)
			}
			err = r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main")
			if (err == nil) != tt.wantOK {
				t.Errorf("Fetch = %v, want ok %v", err, tt.wantOK)
			}
			sha := f.commitFile(t, r, f.base, "http.txt", tt.name, tt.name)
			branch := "ralph/http-" + strings.ReplaceAll(tt.name, " ", "-")
			err = r.Push(ctx, sha, branch, "")
			var rejected *PushRejectedError
			if (err == nil) != tt.wantOK || errors.As(err, &rejected) {
				t.Errorf("Push = %v, want ok %v (and never a rejection)", err, tt.wantOK)
			}
			want := ""
			if tt.wantOK {
				want = sha
			}
			if got := f.remoteSHA(t, f.origin, branch); got != want {
				t.Errorf("remote branch = %q, want %q", got, want)
			}
			if err != nil && tt.token != "" && (strings.Contains(err.Error(), tt.token) || strings.Contains(err.Error(), basic(tt.token))) {
				t.Errorf("error holds the token: %v", err)
			}
		})
	}
}

func TestErrorsRedactToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_EchoedSecret456"
	b64 := basic(token)
	f := newFixture(t)
	sha := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	// A remote that names the token in its refusal (porcelain output on stdout).
	echoing := funcRunner(func(args []string) ([]byte, error) {
		if subcommand(args) != "push" {
			return nil, nil
		}
		out := "To x\n!\t" + sha + ":refs/heads/b\t[remote rejected] (denied: " + b64 + " " + token + ")\nDone\n"
		return []byte(out), &CommandError{Args: args, Stderr: "error: failed to push some refs", Err: errors.New("exit status 1")}
	})
	tests := []struct {
		name   string
		runner Runner
		url    string
		op     func(r *Repo) error
	}{
		// Real git repeats the remote's address in its error.
		{"fetch: git echoes the URL", f.runner, "/nonexistent/" + token, func(r *Repo) error { return r.Fetch(context.Background(), "main") }},
		{"ls-remote: git echoes the URL", f.runner, "/nonexistent/" + token, func(r *Repo) error {
			_, _, err := r.RemoteHeads(context.Background(), "main")
			return err
		}},
		{"push: git echoes the URL", f.runner, "/nonexistent/" + token, func(r *Repo) error { return r.Push(context.Background(), sha, "ralph/b", "") }},
		{"runner error holds the header", funcRunner(func([]string) ([]byte, error) {
			return nil, errors.New("fatal: bad header AUTHORIZATION: basic " + b64 + " for " + token)
		}), f.origin, func(r *Repo) error { return r.Fetch(context.Background(), "main") }},
		{"command error holds both", funcRunner(func(args []string) ([]byte, error) {
			return nil, &CommandError{Args: append(args, b64), Stderr: "fatal: " + token, Err: errors.New("exit " + token)}
		}), f.origin, func(r *Repo) error { return r.Fetch(context.Background(), "main") }},
		{"rejection reason holds both", echoing, f.origin, func(r *Repo) error { return r.Push(context.Background(), sha, "ralph/b", "") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Repo{GitDir: f.repo.GitDir, URL: tt.url, Runner: tt.runner, Auth: Auth{Token: token}, Branches: "ralph/"}
			err := tt.op(r)
			if err == nil {
				t.Fatal("succeeded, want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, token) || strings.Contains(msg, b64) || !strings.Contains(msg, "***") {
				t.Errorf("error not redacted: %s", msg)
			}
			var ce *CommandError
			if errors.As(err, &ce) {
				all := strings.Join(ce.Args, " ") + ce.Stderr
				if strings.Contains(all, token) || strings.Contains(all, b64) {
					t.Errorf("CommandError fields not redacted: %+v", ce)
				}
				for e := errors.Unwrap(ce); e != nil; e = errors.Unwrap(e) {
					if strings.Contains(e.Error(), token) {
						t.Errorf("wrapped error not redacted: %v", e)
					}
				}
			}
			var rejected *PushRejectedError
			if errors.As(err, &rejected) && (strings.Contains(rejected.Reason, token) || strings.Contains(rejected.Reason, b64)) {
				t.Errorf("rejection reason not redacted: %q", rejected.Reason)
			}
		})
	}
}

// evilConfig is a user's global git config that would redirect pushes and fetches to other, run hooks
// and an fsmonitor, trace every command to a file and filter every file, were ralph's git to read it.
func evilConfig(t *testing.T, dir, origin, other string) (cfg, marker, trace string) {
	t.Helper()
	marker = filepath.Join(dir, "marker")
	trace = filepath.Join(dir, "trace2")
	hooks := filepath.Join(dir, "hooks")
	for _, h := range []string{"reference-transaction", "post-index-change", "pre-push", "post-checkout", "pre-commit", "post-commit", "pre-auto-gc"} {
		writeScript(t, filepath.Join(hooks, h), "echo hook "+h+" >> "+marker)
	}
	writeScript(t, filepath.Join(dir, "fsmonitor"), "echo fsmonitor >> "+marker)
	writeScript(t, filepath.Join(dir, "clean"), "echo filter clean >> "+marker+"; tr a-z A-Z")
	writeScript(t, filepath.Join(dir, "smudge"), "echo filter smudge >> "+marker+"; tr a-z A-Z")
	cfg = filepath.Join(dir, "gitconfig")
	writeFile(t, cfg, `[url "`+other+`"]
	insteadOf = `+origin+`
	pushInsteadOf = `+origin+`
[core]
	hooksPath = `+hooks+`
	fsmonitor = `+filepath.Join(dir, "fsmonitor")+`
[trace2]
	eventTarget = `+trace+`
[filter "evil"]
	clean = `+filepath.Join(dir, "clean")+`
	smudge = `+filepath.Join(dir, "smudge")+`
	required = true
[user]
	name = Evil
	email = evil@example.com
`)
	return cfg, marker, trace
}

// TestGlobalConfigIgnored: a global config (in HOME and XDG_CONFIG_HOME) that would redirect, trace,
// run programs and filter has no effect on anything ralph's repository does.
func TestGlobalConfigIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	home := t.TempDir()
	other := filepath.Join(t.TempDir(), "other.git")
	f.git(t, "", "init", "--quiet", "--bare", other)
	cfg, marker, trace := evilConfig(t, t.TempDir(), f.origin, other)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".gitconfig"), string(b))
	writeFile(t, filepath.Join(home, ".config", "git", "config"), string(b))
	runner := ExecRunner{Env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}}

	// The config works for plain git with that HOME, so this test would notice ralph reading it.
	sanity := filepath.Join(t.TempDir(), "sanity")
	runGit(t, runner.Env, "", "init", "--quiet", sanity)
	writeFile(t, filepath.Join(sanity, ".gitattributes"), "* filter=evil\n")
	writeFile(t, filepath.Join(sanity, "a.txt"), "lower\n")
	runGit(t, runner.Env, sanity, "add", ".")
	runGit(t, runner.Env, sanity, "remote", "add", "origin", f.origin)
	if got := runGit(t, runner.Env, sanity, "remote", "get-url", "--push", "origin"); got != other {
		t.Errorf("sanity: push URL = %q, want %q", got, other)
	}
	got, _ := os.ReadFile(marker)
	if !strings.Contains(string(got), "filter clean") || !strings.Contains(string(got), "hook post-index-change") {
		t.Errorf("sanity: plain git did not run the planted programs: %q", got)
	}
	if _, err := os.Stat(trace); err != nil {
		t.Errorf("sanity: plain git wrote no trace: %v", err)
	}
	for _, p := range []string{marker, trace} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}

	r, err := Open(ctx, runner, filepath.Join(t.TempDir(), "ralph.git"), f.checkout, "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	r.Branches = "ralph/"
	if _, heads, err := r.RemoteHeads(ctx, "main"); err != nil || heads["main"] != f.base {
		t.Fatalf("RemoteHeads = %v, %v; want main at %s (from the real origin)", heads, err, f.base)
	}
	if err := r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, f.base); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{".gitattributes": "* filter=evil\n", "a.txt": "lower\n"} {
		if err := r.AddBlob(ctx, index, name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitTree(ctx, tree, f.base, "msg", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, sha, "ralph/cfg", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Diff(ctx, f.base, sha); err != nil {
		t.Fatal(err)
	}
	// A second checkout, of a tree whose .gitattributes asks for the filter.
	if err := r.Checkout(ctx, filepath.Join(t.TempDir(), "index"), t.TempDir(), sha); err != nil {
		t.Fatal(err)
	}

	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("programs from the global config ran: %q", b)
	}
	if _, err := os.Stat(trace); err == nil {
		t.Error("git traced to the file the global config names")
	}
	if got := f.git(t, other, "for-each-ref"); got != "" {
		t.Errorf("the redirected remote received %q", got)
	}
	if got := f.remoteSHA(t, f.origin, "ralph/cfg"); got != sha {
		t.Errorf("origin's ralph/cfg = %q, want %q", got, sha)
	}
	if content, _, err := r.File(ctx, sha, "a.txt", 100); err != nil || string(content) != "lower\n" {
		t.Errorf("committed a.txt = %q, %v; want it unfiltered", content, err)
	}
	if got := f.git(t, f.origin, "log", "-1", "--format=%an <%ae>", "ralph/cfg"); got != "ralph <ralph@example.com>" {
		t.Errorf("author = %q", got)
	}
}

// TestInheritedGitEnvironmentIgnored runs this test binary again with git's own variables set in its
// environment (as a hostile parent or CI step could leave them): ralph's git must not see them.
func TestInheritedGitEnvironmentIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "other.git")
	f.git(t, "", "init", "--quiet", "--bare", other)
	cfg, marker, trace := evilConfig(t, dir, f.origin, other)
	trace1 := filepath.Join(dir, "trace1")
	index := filepath.Join(dir, "foreign-index")
	evil := []string{
		"GIT_CONFIG_GLOBAL=" + cfg,
		"GIT_CONFIG_SYSTEM=" + cfg,
		"GIT_CONFIG_NOSYSTEM=",
		"GIT_TRACE2_EVENT=" + trace,
		"GIT_TRACE=" + trace1,
		"GIT_CONFIG_PARAMETERS='core.hookspath'='" + filepath.Join(dir, "hooks") + "'",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=" + filepath.Join(dir, "hooks"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(other, "objects"),
		"GIT_INDEX_FILE=" + index,
		"GIT_AUTHOR_NAME=Evil", "GIT_AUTHOR_EMAIL=evil@example.com",
	}
	// The variables work for plain git, so this test would notice ralph passing them on.
	cmd := exec.Command("git", "version")
	cmd.Env = append(os.Environ(), evil...)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{trace, trace1} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("sanity: plain git wrote no trace to %s", p)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}

	cmd = exec.Command(os.Args[0], "-test.run=^TestInheritedGitEnvironmentHelper$", "-test.v")
	cmd.Env = append(os.Environ(), evil...)
	cmd.Env = append(cmd.Env, "RALPH_GIT_HELPER=1", "HOME="+f.home,
		"RALPH_GIT_HELPER_DIR="+filepath.Join(dir, "ralph.git"), "RALPH_GIT_HELPER_CHECKOUT="+f.checkout, "RALPH_GIT_HELPER_BASE="+f.base)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "helper done") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	sha := f.remoteSHA(t, f.origin, "ralph/env")
	if sha == "" {
		t.Fatalf("the helper pushed nothing to origin:\n%s", out)
	}
	for _, p := range []string{marker, trace, trace1, index} {
		if b, err := os.ReadFile(p); err == nil {
			t.Errorf("%s was written: %q", filepath.Base(p), b)
		}
	}
	if got := f.git(t, other, "count-objects"); got != "0 objects, 0 kilobytes" {
		t.Errorf("objects were written to the foreign object directory: %s", got)
	}
	if got := f.git(t, f.origin, "log", "-1", "--format=%an", sha); got != "ralph" {
		t.Errorf("author = %q, want ralph", got)
	}
}

// TestInheritedGitEnvironmentHelper is the child of TestInheritedGitEnvironmentIgnored.
func TestInheritedGitEnvironmentHelper(t *testing.T) {
	if os.Getenv("RALPH_GIT_HELPER") != "1" {
		t.Skip("run by TestInheritedGitEnvironmentIgnored")
	}
	ctx := context.Background()
	r, err := Open(ctx, ExecRunner{}, os.Getenv("RALPH_GIT_HELPER_DIR"), os.Getenv("RALPH_GIT_HELPER_CHECKOUT"), "", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	r.Branches = "ralph/"
	base := os.Getenv("RALPH_GIT_HELPER_BASE")
	if _, _, err := r.RemoteHeads(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if err := r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, base); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{".gitattributes": "* filter=evil\n", "a.txt": "lower\n"} {
		if err := r.AddBlob(ctx, index, name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitTree(ctx, tree, base, "msg", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, sha, "ralph/env", ""); err != nil {
		t.Fatal(err)
	}
	t.Log("helper done")
}

// TestRepositoryHooksDoNotRun: hooks and an fsmonitor planted in ralph's own repository (its hooks
// directory and config) run for plain git but never for ralph's commands.
func TestRepositoryHooksDoNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	marker := filepath.Join(f.root, "marker")
	for _, h := range []string{"reference-transaction", "post-index-change", "pre-push", "post-checkout", "pre-auto-gc"} {
		writeScript(t, filepath.Join(r.GitDir, "hooks", h), "echo hook "+h+" >> "+marker)
	}
	writeScript(t, filepath.Join(f.root, "fsmonitor"), "echo fsmonitor >> "+marker)
	f.ralph(t, "config", "core.fsmonitor", filepath.Join(f.root, "fsmonitor"))
	// Sanity: plain git on the same repository runs them.
	f.ralph(t, "update-ref", "refs/sanity", f.base)
	if b, _ := os.ReadFile(marker); !strings.Contains(string(b), "reference-transaction") {
		t.Fatalf("sanity: plain git did not run the planted hook: %q", b)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	if err := r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, f.base); err != nil {
		t.Fatal(err)
	}
	if err := r.AddBlob(ctx, index, "a.txt", []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitTree(ctx, tree, f.base, "a", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, sha, "ralph/hooks", ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("planted programs ran for ralph's commands: %q", b)
	}
}

// TestPushRejectionForms: git reports a refused ref in its porcelain output or, failing that, in its
// human-readable error; either is a *PushRejectedError, and anything else is not.
func TestPushRejectionForms(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("a", 40)
	tests := []struct {
		name, stdout, stderr string
		want                 string // the reason; "" for a plain error
	}{
		{"porcelain stale", "To x\n!\t" + sha + ":refs/heads/b\t[rejected] (stale info)\nDone\n", "error: failed to push some refs", "stale info"},
		{"porcelain hook", "To x\n!\t" + sha + ":refs/heads/b\t[remote rejected] (pre-receive hook declined)\nDone\n", "", "pre-receive hook declined"},
		{"human form only", "", "To x\n ! [rejected]        " + sha + " -> b (non-fast-forward)\nerror: failed to push some refs", "non-fast-forward"},
		{"no reason given", "!\t" + sha + ":refs/heads/b\t[rejected]\n", "", "rejected"},
		{"network error", "", "fatal: unable to access 'https://x/': Could not resolve host: x", ""},
	}
	for _, tt := range tests {
		r := &Repo{GitDir: t.TempDir(), URL: "https://x/", Branches: "ralph/", Runner: funcRunner(func(args []string) ([]byte, error) {
			if subcommand(args) != "push" {
				return nil, nil
			}
			return []byte(tt.stdout), &CommandError{Args: args, Stderr: tt.stderr, Err: errors.New("exit status 1")}
		})}
		err := r.Push(context.Background(), sha, "ralph/b", "")
		var rejected *PushRejectedError
		switch {
		case err == nil:
			t.Errorf("%s: Push succeeded", tt.name)
		case tt.want == "" && errors.As(err, &rejected):
			t.Errorf("%s: Push = %v, want a plain error", tt.name, err)
		case tt.want != "" && (!errors.As(err, &rejected) || !strings.Contains(rejected.Reason, tt.want)):
			t.Errorf("%s: Push = %v, want rejected with %q", tt.name, err, tt.want)
		}
	}
}

// A ref of ralph's own (the day's spending) is fetched, read and moved by compare-and-swap: a push from a
// stale value is refused, whatever the new commit's ancestry.
func TestNoteRef(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const ref = "refs/ralph/budget/day"
	if sha, found, err := f.repo.FetchRef(ctx, ref); err != nil || found || sha != "" {
		t.Fatalf("FetchRef of a missing ref = %q, %v, %v", sha, found, err)
	}
	first, err := f.repo.CommitNote(ctx, "first\n\n{\"n\":1}", "", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.repo.PushRef(ctx, first, ref, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.PushRef(ctx, first, ref, ""); err != nil {
		t.Errorf("repeating a push that went through: %v", err)
	}
	second, _ := f.repo.CommitNote(ctx, "second", first, sig)
	other, _ := f.repo.CommitNote(ctx, "another run's", "", sig)
	if err := f.repo.PushRef(ctx, other, ref, ""); !isRejected(err) {
		t.Errorf("creating a ref that exists: %v, want a rejection", err)
	}
	if err := f.repo.PushRef(ctx, second, ref, first); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.PushRef(ctx, other, ref, first); !isRejected(err) {
		t.Errorf("moving the ref from a stale value: %v, want a rejection", err)
	}
	sha, found, err := f.repo.FetchRef(ctx, ref)
	if err != nil || !found || sha != second {
		t.Fatalf("FetchRef = %q, %v, %v; want %s", sha, found, err, second)
	}
	if msg, err := f.repo.Message(ctx, first); err != nil || msg != "first\n\n{\"n\":1}\n" {
		t.Errorf("Message = %q, %v", msg, err)
	}
	if tree := f.ralph(t, "rev-parse", second+"^{tree}"); tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("a note's tree is %s, want the empty tree", tree)
	}
	for _, bad := range []string{"refs/ralph/bad..ref", "ralph/budget", "--upload-pack=x"} {
		if err := f.repo.PushRef(ctx, second, bad, ""); err == nil {
			t.Errorf("PushRef(%q): no error", bad)
		}
		if _, _, err := f.repo.FetchRef(ctx, bad); err == nil {
			t.Errorf("FetchRef(%q): no error", bad)
		}
	}
}

func isRejected(err error) bool {
	var rej *PushRejectedError
	return errors.As(err, &rej)
}

// A lock-like ref: read without leaving a local ref, listed by prefix, and deleted only from the value the
// deleter read.
func TestReadDeleteAndListRemoteRefs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const ref = "refs/ralph/locks/7"
	if sha, found, err := f.repo.ReadRef(ctx, ref); err != nil || found || sha != "" {
		t.Fatalf("ReadRef of a missing ref = %q, %v, %v", sha, found, err)
	}
	first, _ := f.repo.CommitNote(ctx, "first", "", sig)
	second, _ := f.repo.CommitNote(ctx, "second", first, sig)
	if err := f.repo.PushRef(ctx, first, ref, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.PushRef(ctx, second, "refs/ralph/locks/8", ""); err != nil {
		t.Fatal(err)
	}
	if sha, found, err := f.repo.ReadRef(ctx, ref); err != nil || !found || sha != first {
		t.Fatalf("ReadRef = %q, %v, %v; want %s", sha, found, err, first)
	}
	if left := f.ralph(t, "for-each-ref", "refs/ralph/"); left != "" {
		t.Errorf("ReadRef left refs behind: %s", left)
	}
	refs, err := f.repo.RemoteRefs(ctx, "refs/ralph/locks/")
	if diff := cmp.Diff(map[string]string{ref: first, "refs/ralph/locks/8": second}, refs); err != nil || diff != "" {
		t.Errorf("RemoteRefs (-want +got) %v:\n%s", err, diff)
	}
	if err := f.repo.DeleteRemoteRef(ctx, ref, second); !isRejected(err) {
		t.Errorf("deleting from a stale value: %v, want a rejection", err)
	}
	if err := f.repo.DeleteRemoteRef(ctx, ref, first); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.DeleteRemoteRef(ctx, ref, first); !isRejected(err) {
		t.Errorf("deleting a ref that is gone: %v, want a rejection", err)
	}
	if _, found, err := f.repo.ReadRef(ctx, ref); err != nil || found {
		t.Errorf("after the delete: found %v, %v", found, err)
	}
}

// SECURITY: the lowest push refuses every destination but a branch under branch_prefix (never the remote's
// default branch) and ralph's own refs/ralph/…, whatever its caller asks.
func TestPushOnlyToRalphsRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sha := f.commitFile(t, f.repo, f.base, "a.txt", "a\n", "a")
	if _, _, err := f.repo.RemoteHeads(ctx); err != nil {
		t.Fatal(err)
	}
	refused := []string{
		"refs/heads/main", "refs/heads/other", "refs/heads/ralph", "refs/heads/ralphx/1",
		"refs/tags/v1", "refs/notes/commits", "refs/pull/1/head",
	}
	for _, ref := range refused {
		err := f.repo.PushRef(ctx, sha, ref, "")
		var de *DestinationError
		if !errors.As(err, &de) {
			t.Errorf("PushRef(%s) = %v, want a *DestinationError", ref, err)
		}
		if err := f.repo.DeleteRemoteRef(ctx, ref, f.base); !errors.As(err, &de) {
			t.Errorf("DeleteRemoteRef(%s) = %v, want a *DestinationError", ref, err)
		}
	}
	if got := f.git(t, f.origin, "for-each-ref", "--format=%(refname) %(objectname)"); got != "refs/heads/main "+f.base {
		t.Errorf("remote refs = %q, want main alone, unmoved", got)
	}
	for _, ref := range []string{"refs/heads/ralph/1-x", "refs/ralph/locks/1"} {
		if err := f.repo.PushRef(ctx, sha, ref, ""); err != nil {
			t.Errorf("PushRef(%s) = %v", ref, err)
		}
	}

	// A prefix that names the default branch still never pushes it.
	f.repo.Branches = "ma"
	if err := f.repo.Push(ctx, sha, "main", f.base); err == nil {
		t.Errorf("pushed the default branch under the prefix %q", f.repo.Branches)
	}
	// No prefix: no branch at all.
	none := *f.repo
	none.Branches = ""
	if err := none.Push(ctx, sha, "ralph/2-y", ""); err == nil {
		t.Error("pushed a branch with no branch prefix set")
	}
}
