package cli

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/lock"
)

// gh ralph's door: the gh token (which reaches the board, with gh's hint when it lacks the project scope,
// and pushes only over https to the session's host), the user's git identity, this process as the lock's
// holder, the Factory's clock and no checkpoint.
func TestDoor(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.env["USER"] = "mona"
	e.env["RALPH_AGENT_WRITABLE"] = "/cache:/more"
	e.env["RALPH_AGENT_READABLE"] = "/opt/sdk"
	e.git(e.dir, "config", "user.name", "Mona Lisa")
	e.git(e.dir, "config", "user.email", "mona@example.com")
	f := e.factory()
	s, err := f.session("")
	if err != nil {
		t.Fatal(err)
	}
	log := newTermLog(f.Stderr, false, f.Now)
	d := s.door(context.Background(), e.dir, config.Default(), log, true)
	if d.Checkpoint != nil || d.Now == nil || !d.Now().Equal(e.now) || d.Log != engine.Logger(log) || d.GitHub != s.gh || d.Transport != s.transport {
		t.Errorf("checkpoint set %v, clock set %v, log %v, client and transport the session's %v", d.Checkpoint != nil, d.Now != nil, d.Log, d.GitHub == s.gh && d.Transport == s.transport)
	}
	host, _ := os.Hostname()
	want := compose.Door{
		Token: "test-token", ProjectToken: "test-token", ProjectHint: scopeHint, Checkout: e.dir,
		PushAuth: git.Auth{}, // origin is a path, not https on the session's host
		Writable: []string{"/cache", "/more"}, ReadOnly: []string{"/opt/sdk"}, Environ: f.Environ(),
		Holder:  lock.Holder{Kind: "local", Host: host, PID: os.Getpid(), User: "mona"},
		Origin:  engine.Origin{URL: "", Label: fmt.Sprintf("gh ralph on %s (pid %d)", host, os.Getpid())},
		Author:  git.Signature{Name: "Mona Lisa", Email: "mona@example.com"},
		Signing: engine.Signing{How: "your git does not sign commits: commit.gpgsign is not true"},
		DryRun:  true, HomeToolchains: true,
	}
	ignore := cmpopts.IgnoreFields(compose.Door{}, "GitHub", "Config", "Log", "Transport", "Now", "Checkpoint")
	if diff := cmp.Diff(want, d, ignore, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("door (-want +got):\n%s", diff)
	}
	// The person signs with an SSH key: ralph's commits are signed with it.
	e.git(e.dir, "config", "commit.gpgsign", "true")
	e.git(e.dir, "config", "gpg.format", "ssh")
	e.git(e.dir, "config", "user.signingkey", "/keys/id.pub")
	d = s.door(context.Background(), e.dir, config.Default(), log, true)
	if diff := cmp.Diff(git.Signature{Name: "Mona Lisa", Email: "mona@example.com", Sign: []string{"gpg.format=ssh", "user.signingKey=/keys/id.pub"}}, d.Author); diff != "" {
		t.Errorf("signing author (-want +got):\n%s", diff)
	}
	if want := (engine.Signing{Signed: true, How: "signed with your ssh key /keys/id.pub"}); d.Signing != want {
		t.Errorf("signing %+v, want %+v", d.Signing, want)
	}
}
