package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// doctor tries ralph's git transport and, when it fails, says what to do about that failure.
func TestRemote(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{TLS: true, GitHTTP: true})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, srv.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	for _, args := range [][]string{{"clone", "-q", srv.BareRepo, work}, {"-C", work, "remote", "set-url", "origin", srv.GitURL()}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	trusting := git.ExecRunner{Env: []string{"GIT_SSL_CAINFO=" + ca}}
	tests := []struct {
		name    string
		runner  git.Runner
		token   string
		want    string // in the finding's line
		problem bool
	}{
		{"ready", trusting, "test-token", "✓ git reaches " + srv.GitURL() + " as ralph's steps do", false},
		{"an untrusted certificate", git.ExecRunner{Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH")} }}, "test-token",
			"export SSL_CERT_FILE=<that file>", true},
		{"a refused token", trusting, "wrong-token", "gh auth login -h " + strings.TrimPrefix(srv.ServerURL, "https://"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Remote(context.Background(), tt.runner, work, git.Auth{Token: tt.token})
			if got := f.String(); f.Problem != tt.problem || !strings.Contains(got, tt.want) {
				t.Errorf("Remote() = %q (problem: %v), want one containing %q (problem: %v)", got, f.Problem, tt.want, tt.problem)
			}
			if strings.Contains(f.String(), tt.token) {
				t.Errorf("the finding holds the token: %q", f.String())
			}
		})
	}
}
