package githubtest

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git's smart HTTP: a clone and a push over the server's TLS with the token, and nothing without it.
func TestGitHTTP(t *testing.T) {
	s := New(t, Options{TLS: true, GitHTTP: true})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, s.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(token string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_SSL_CAINFO="+ca, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		if token != "" {
			basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
			cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=AUTHORIZATION: basic "+basic)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if got, want := s.GitURL(), s.ServerURL+"/octo/demo.git"; got != want {
		t.Fatalf("GitURL() = %q, want %q", got, want)
	}
	if out, err := git("", "ls-remote", s.GitURL()); err == nil {
		t.Errorf("ls-remote without the token worked:\n%s", out)
	}
	if out, err := git("wrong-token", "ls-remote", s.GitURL()); err == nil {
		t.Errorf("ls-remote with another token worked:\n%s", out)
	}
	if out, err := git("test-token", "clone", "-q", s.GitURL(), "clone"); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "clone", "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-C", "clone", "add", "new.txt"}, {"-C", "clone", "commit", "-q", "-m", "new"}, {"-C", "clone", "push", "-q", "origin", "HEAD:refs/heads/topic"}} {
		if out, err := git("test-token", args...); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if s.branchSHA("topic") == "" {
		t.Error("the push over HTTPS did not create the branch topic")
	}
	// Only the repository's service paths reach http-backend.
	resp, err := s.Client().Get(s.ServerURL + "/octo/demo.git/HEAD")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, 404; got != want {
		t.Errorf("GET /octo/demo.git/HEAD: %d, want %d", got, want)
	}
}
