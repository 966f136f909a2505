package git

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-9", "main")
	if err != nil {
		t.Fatal(err)
	}
	first := f.commit(t, w.Dir, "a.txt", "a\n")

	// Creating the branch.
	if err := w.Push(ctx, "ralph/issue-9", ""); err != nil {
		t.Fatalf("Push new branch: %v", err)
	}
	sha, ok, err := remoteSHA(ctx, f.repo, "ralph/issue-9")
	if err != nil || !ok || sha != first {
		t.Fatalf("remote branch = %q, %v, %v; want %q, true, nil", sha, ok, err, first)
	}
	// Repeating the same push (a crash after pushing) is harmless.
	if err := w.Push(ctx, "ralph/issue-9", ""); err != nil {
		t.Errorf("repeated push of the same commit: %v", err)
	}
	second := f.commit(t, w.Dir, "b.txt", "b\n")

	tests := []struct {
		name      string
		expectOld string
		wantErr   bool
	}{
		{"must not exist but does", "", true},
		{"wrong lease", f.base, true},
		{"right lease", first, false},
	}
	for _, tt := range tests {
		err := w.Push(ctx, "ralph/issue-9", tt.expectOld)
		var rejected *PushRejectedError
		if got := errors.As(err, &rejected); got != tt.wantErr {
			t.Errorf("%s: Push error = %v, want rejected: %v", tt.name, err, tt.wantErr)
		}
		if tt.wantErr && rejected != nil && (rejected.Branch != "ralph/issue-9" || rejected.Reason == "") {
			t.Errorf("%s: rejection = %+v", tt.name, rejected)
		}
	}
	if sha, _, _ := remoteSHA(ctx, f.repo, "ralph/issue-9"); sha != second {
		t.Errorf("remote branch = %s, want %s", sha, second)
	}
	if err := w.Push(ctx, "bad..name", ""); err == nil {
		t.Error("Push to an invalid branch name succeeded")
	}
}

func TestPushRejectedByRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	writeFile(t, filepath.Join(f.origin, "hooks", "pre-receive"), "#!/bin/sh\necho protected >&2\nexit 1\n")
	f.git(t, f.origin, "config", "core.hooksPath", filepath.Join(f.origin, "hooks"))
	if err := chmodX(filepath.Join(f.origin, "hooks", "pre-receive")); err != nil {
		t.Fatal(err)
	}
	w, err := f.repo.Worktree(ctx, "issue-10", "main")
	if err != nil {
		t.Fatal(err)
	}
	f.commit(t, w.Dir, "a.txt", "a\n")
	err = w.Push(ctx, "ralph/issue-10", "")
	var rejected *PushRejectedError
	if !errors.As(err, &rejected) || !strings.Contains(rejected.Reason, "hook declined") {
		t.Errorf("Push = %v, want a *PushRejectedError for the declined hook", err)
	}
}

func TestPushNetworkErrorIsNotRejection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w, err := f.repo.Worktree(ctx, "issue-11", "main")
	if err != nil {
		t.Fatal(err)
	}
	f.repo.Remote = filepath.Join(t.TempDir(), "missing.git")
	err = w.Push(ctx, "ralph/issue-11", "")
	var rejected *PushRejectedError
	if err == nil || errors.As(err, &rejected) {
		t.Errorf("Push to a missing remote = %v, want a plain error", err)
	}
}

func TestRemoteHeadsAndFetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	// Someone else pushes a branch; ralph's checkout does not know it yet.
	other := filepath.Join(t.TempDir(), "other")
	f.git(t, f.repo.Dir, "clone", "--quiet", f.origin, other)
	theirs := f.commit(t, other, "theirs.txt", "x\n")
	f.git(t, other, "push", "--quiet", "origin", "HEAD:refs/heads/ralph/issue-12", "HEAD:refs/heads/prefix/ralph/issue-12x")

	tests := []struct {
		branch  string
		wantSHA string
		wantOK  bool
	}{
		{"ralph/issue-12", theirs, true},
		{"main", f.base, true},
		{"issue-12", "", false},
		{"ralph/issue-99", "", false},
	}
	for _, tt := range tests {
		sha, ok, err := remoteSHA(ctx, f.repo, tt.branch)
		if err != nil || sha != tt.wantSHA || ok != tt.wantOK {
			t.Errorf("RemoteHeads(%q) = %q, %v, %v; want %q, %v, nil", tt.branch, sha, ok, err, tt.wantSHA, tt.wantOK)
		}
	}

	if err := f.repo.Fetch(ctx, "+refs/heads/ralph/issue-12:refs/remotes/origin/ralph/issue-12"); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if got := f.git(t, f.repo.Dir, "rev-parse", "refs/remotes/origin/ralph/issue-12"); got != theirs {
		t.Errorf("fetched ref = %s, want %s", got, theirs)
	}
	// A worktree can start from what was fetched.
	w, err := f.repo.Worktree(ctx, "issue-12", "refs/remotes/origin/ralph/issue-12")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.HeadSHA(ctx); got != theirs {
		t.Errorf("worktree HEAD = %s, want %s", got, theirs)
	}
}

func TestAuthHeaderOnlyOnNetworkCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const token = "ghs_TopSecretToken123"
	header := "http.extraheader=AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	rec := &recordingRunner{next: f.runner}
	repo := &Repo{Dir: f.repo.Dir, Runner: rec, Auth: Auth{Token: token}}
	urlBefore := f.git(t, repo.Dir, "remote", "get-url", "origin")

	w, err := repo.Worktree(ctx, "issue-13", "main")
	if err != nil {
		t.Fatal(err)
	}
	want := f.commit(t, w.Dir, "a.txt", "a\n")
	// The header is present and the real push to a path remote still works.
	if err := w.Push(ctx, "ralph/issue-13", ""); err != nil {
		t.Fatalf("Push with auth: %v", err)
	}
	if err := repo.Fetch(ctx, "+refs/heads/ralph/issue-13:refs/remotes/origin/ralph/issue-13"); err != nil {
		t.Fatalf("Fetch with auth: %v", err)
	}
	if sha, ok, err := remoteSHA(ctx, repo, "ralph/issue-13"); err != nil || !ok || sha != want {
		t.Fatalf("remote branch = %q, %v, %v; want %q", sha, ok, err, want)
	}

	network := map[string]bool{"push": true, "fetch": true, "ls-remote": true}
	seen := map[string]bool{}
	for _, args := range rec.recorded() {
		sub := subcommand(args)
		hasHeader := false
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-c" && args[i+1] == header {
				hasHeader = true
			}
		}
		if hasHeader != network[sub] {
			t.Errorf("git %s: auth header present = %v, want %v", sub, hasHeader, network[sub])
		}
		if network[sub] {
			seen[sub] = true
		}
	}
	if len(seen) != len(network) {
		t.Errorf("network commands seen = %v, want all of %v", seen, network)
	}

	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, dir := range []string{repo.Dir, w.Dir} {
		cfg := f.git(t, dir, "config", "--list", "--show-origin")
		if strings.Contains(cfg, token) || strings.Contains(cfg, b64) || strings.Contains(strings.ToLower(cfg), "extraheader") {
			t.Errorf("credential found in the config seen from %s:\n%s", dir, cfg)
		}
	}
	if got := f.git(t, repo.Dir, "remote", "get-url", "origin"); got != urlBefore {
		t.Errorf("remote URL changed to %q", got)
	}
}

func TestErrorsRedactToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_EchoedSecret456"
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	f := newFixture(t)
	tests := []struct {
		name   string
		runner Runner
		remote string
	}{
		// Real git repeats the remote's name in its error.
		{"real git echoes the token", f.runner, "/nonexistent/" + token},
		{"runner error holds the header", errRunner{errors.New("fatal: bad header AUTHORIZATION: basic " + b64 + " for " + token)}, ""},
		{"command error holds both", errRunner{&CommandError{Args: []string{"-c", "http.extraheader=AUTHORIZATION: basic " + b64, "fetch"}, Stderr: "fatal: " + token, Err: errors.New("exit status 128")}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := &Repo{Dir: f.repo.Dir, Runner: tt.runner, Auth: Auth{Token: token}, Remote: tt.remote}
			err := repo.Fetch(context.Background())
			if err == nil {
				t.Fatal("Fetch succeeded, want an error")
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
		})
	}
}

type errRunner struct{ err error }

func (r errRunner) Run(context.Context, string, []string, ...string) ([]byte, error) {
	return nil, r.err
}

func TestMarkSafe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	for i := 0; i < 2; i++ {
		if err := f.repo.MarkSafe(ctx); err != nil {
			t.Fatalf("MarkSafe #%d: %v", i+1, err)
		}
	}
	got := strings.Split(f.git(t, f.repo.Dir, "config", "--global", "--get-all", "safe.directory"), "\n")
	if !slices.Equal(got, []string{f.repo.Dir}) {
		t.Errorf("safe.directory = %q, want exactly [%q]", got, f.repo.Dir)
	}
}

func TestExecRunnerCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.runner.Run(ctx, f.repo.Dir, nil, "status")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestExecRunnerErrorCarriesStderr(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.runner.Run(context.Background(), f.repo.Dir, nil, "-c", "x.y=secret", "rev-parse", "--verify", "no-such-ref")
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "git rev-parse: fatal: Needed a single revision") {
		t.Errorf("error = %v, want a CommandError naming rev-parse with its stderr", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error prints the command line: %v", err)
	}
}

// TestHooksDoNotRun: the agent can write hooks into the shared .git directory;
// they must not run inside ralph's commit and push, which carry ralph's
// environment and the auth header.
func TestHooksDoNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	common, err := f.repo.GitCommonDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit", "pre-push"} {
		path := filepath.Join(common, "hooks", hook)
		writeFile(t, path, "#!/bin/sh\necho "+hook+" >> "+marker+"\n")
		if err := chmodX(path); err != nil {
			t.Fatal(err)
		}
	}
	w, err := f.repo.Worktree(ctx, "issue-14", "main")
	if err != nil {
		t.Fatal(err)
	}
	// An fsmonitor hook in the shared config runs on nearly every git command.
	fsmonitor := filepath.Join(common, "fsmonitor.sh")
	writeFile(t, fsmonitor, "#!/bin/sh\necho fsmonitor >> "+marker+"\n")
	if err := chmodX(fsmonitor); err != nil {
		t.Fatal(err)
	}
	f.git(t, f.repo.Dir, "config", "core.fsmonitor", fsmonitor)
	writeFile(t, filepath.Join(w.Dir, "a.txt"), "a\n")
	if _, err := w.Changes(ctx, f.base); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.CommitAll(ctx, "msg", Signature{Name: "r", Email: "r@example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx, "ralph/issue-14", ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("hooks ran: %s", b)
	}
	// The hooks themselves work, so the test would notice if ralph ran them.
	f.commit(t, f.repo.Dir, "b.txt", "b\n")
	b, _ := os.ReadFile(marker)
	for _, hook := range []string{"pre-commit", "fsmonitor"} {
		if !strings.Contains(string(b), hook) {
			t.Errorf("planted %s did not run for a plain git commit; ran: %q", hook, b)
		}
	}
}

func TestDropPersistedCredentials(t *testing.T) {
	t.Parallel()
	env := newFixture(t)
	repo := env.repo
	ctx := context.Background()
	// Nothing persisted: nothing removed, no error.
	if got, err := repo.DropPersistedCredentials(ctx); err != nil || len(got) != 0 {
		t.Fatalf("clean checkout: removed %v, err %v", got, err)
	}
	env.git(t, repo.Dir, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0")
	env.git(t, repo.Dir, "config", "--local", "user.name", "Keep Me")
	got, err := repo.DropPersistedCredentials(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "http.https://github.com/.extraheader" {
		t.Errorf("removed %v", got)
	}
	cfg := env.git(t, repo.Dir, "config", "--local", "--list")
	if strings.Contains(cfg, "extraheader") || !strings.Contains(cfg, "user.name=Keep Me") {
		t.Errorf("config after: %s", cfg)
	}
}

// remoteSHA is where branch points on the remote, as RemoteHeads reads it.
func remoteSHA(ctx context.Context, r *Repo, branch string) (string, bool, error) {
	_, heads, err := r.RemoteHeads(ctx, branch)
	sha, ok := heads[branch]
	return sha, ok, err
}
