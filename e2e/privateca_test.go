package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// newPrivateCAEnv is a person's checkout whose origin is GitHub's HTTPS git URL on a host with a private CA,
// trusted the one way the README gives: SSL_CERT_FILE (no GIT_SSL_CAINFO, no git config of the person's).
func newPrivateCAEnv(t *testing.T, configYAML string) *cliEnv {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true, GitHTTP: true})
	e := newCLIEnvOn(t, srv, configYAML, cliVars(t, srv))
	e.git(e.work, "remote", "set-url", "origin", srv.GitURL())
	return e
}

// ralph's git trusts what its API client trusts: over HTTPS with a private CA given only in SSL_CERT_FILE,
// a step reads the remote, takes its lock and pushes (Debian's git, built with GnuTLS, ignores
// SSL_CERT_FILE; ralph hands it the same bundle as GIT_SSL_CAINFO).
func TestPrivateCAGitTransport(t *testing.T) {
	t.Parallel()
	e := newPrivateCAEnv(t, agentConfig(t))
	// doctor tries the same transport before it says ready.
	d := e.cli(binary, "doctor")
	if want := "✓ git reaches " + e.srv.GitURL() + " as ralph's steps do (ls-remote)\n"; !strings.Contains(d.stdout, want) {
		t.Errorf("doctor does not say %q:\n%s%s", want, d.stdout, d.stderr)
	}
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-review")
	if r.exit != 0 {
		t.Fatalf("advance over HTTPS with a private CA: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.InReview)
	if !e.branchExists("ralph/1-add-a-greeting") {
		t.Error("ralph pushed no branch over HTTPS")
	}
	if strings.Contains(r.stdout+r.stderr, "certificate") {
		t.Errorf("a certificate problem was reported:\n%s%s", r.stdout, r.stderr)
	}
}
