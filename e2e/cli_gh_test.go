package e2e

// End-to-end tests of the gh door: the built binary run as a person runs `gh ralph` (and, in
// TestCLIUnderGH, run by the real gh as an installed extension), against the GitHub test server served over
// HTTPS as an Enterprise host.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// cliEnv is a repository on an Enterprise-style HTTPS test server and a person's clone of it.
type cliEnv struct {
	*env
	vars map[string]string // the person's environment, beyond the process's
	work string            // the person's checkout
}

// newCLIEnv serves the test server on its own random port, so the host carries a port
// (GH_HOST=127.0.0.1:PORT): ralph's client must still send the token there.
func newCLIEnv(t *testing.T, configYAML string) *cliEnv {
	t.Helper()
	return newCLIEnvAs(t, runAs{}, configYAML)
}

// cliVars points gh ralph at srv, served over HTTPS, as an Enterprise host with a port.
func cliVars(t *testing.T, srv *githubtest.Server) map[string]string {
	t.Helper()
	host := strings.TrimPrefix(srv.ServerURL, "https://")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"GH_HOST": host, "GH_REPO": host + "/octo/demo", "GH_ENTERPRISE_TOKEN": "test-token", "SSL_CERT_FILE": ca,
	}
}

func newCLIEnvOn(t *testing.T, srv *githubtest.Server, configYAML string, vars map[string]string) *cliEnv {
	t.Helper()
	return newCLIEnvOnAs(t, runAs{}, srv, configYAML, vars)
}

// newCLIEnvOnAs is newCLIEnvOn with ralph (and gh) run as as says.
func newCLIEnvOnAs(t *testing.T, as runAs, srv *githubtest.Server, configYAML string, vars map[string]string) *cliEnv {
	t.Helper()
	e := &cliEnv{env: &env{t: t, srv: srv, control: controlDir(t)}}
	e.setUser(as)
	if ca := vars["SSL_CERT_FILE"]; ca != "" && e.cred != nil {
		e.reach(ca)
	}
	e.srv.SetPermission(maintainer, "admin")
	e.work = filepath.Join(e.tempDir(), "work")
	e.git("", "clone", "-q", e.srv.BareRepo, e.work)
	e.git(e.work, "config", "user.name", "Mona Lisa")
	e.git(e.work, "config", "user.email", "mona@example.com")
	if configYAML != "" {
		p := filepath.Join(e.work, ".github", "ralph.yml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(configYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		e.own(e.work)
		e.git(e.work, "add", "-A")
		e.git(e.work, "commit", "-q", "-m", "add ralph config")
		e.git(e.work, "push", "-q", "origin", "HEAD:main")
	}
	e.vars = map[string]string{"RALPH_TEST_CONTROL": e.control, "RALPH_AGENT_WRITABLE": e.control, "RALPH_AGENT_READABLE": agentReadable(t), "GH_NO_UPDATE_NOTIFIER": "1", "GH_PROMPT_DISABLED": "1"}
	for k, v := range vars {
		e.vars[k] = v
	}
	// GET /user answers for the person running gh ralph, not the Actions bot.
	asPerson(e.srv, maintainer)
	return e
}

func asPerson(srv *githubtest.Server, login string) {
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.Path != "/api/v3/user" {
			return false
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"login":"` + login + `","id":4242,"type":"User"}`))
		return true
	})
}

// environ is the process environment without anything that would point ralph or gh elsewhere.
func (e *cliEnv) environ() []string {
	var out []string
	for _, kv := range e.gitEnv() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GH_HOST", "GH_REPO", "GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_CONFIG_DIR", "SSL_CERT_FILE":
			continue
		case "GIT_SSL_CAINFO", "GIT_SSL_CAPATH":
			// The machine's own (a CI image may set them): a test's CA reaches git only as the test says.
			continue
		}
		out = append(out, kv)
	}
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// cli runs the binary (name: gh-ralph, or gh for TestCLIUnderGH) in the person's checkout.
func (e *cliEnv) cli(name string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = e.work
	cmd.Env = e.environ()
	cmd.SysProcAttr = e.sysProcAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	e.resetAgentUser()
	err := cmd.Run()
	e.checkAgentUser()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if testing.Verbose() {
		e.t.Logf("%s %s: exit %d\n%s%s", filepath.Base(name), strings.Join(args, " "), r.exit, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "test-token") {
		e.t.Errorf("%s printed the token", strings.Join(args, " "))
	}
	return r
}

func agentConfig(t *testing.T) string {
	return fmt.Sprintf("agent:\n  preset: command\n  command: %q\n", agentCommand(t)) + agentEnvYAML
}

// gh ralph advance does the Action's step from a person's checkout, whose branch, index and uncommitted
// changes it never touches; --until runs step after step to a state.
func TestCLIAdvance(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

	// The person is on their own branch with work in progress.
	e.git(e.work, "checkout", "-q", "-b", "my-work")
	if err := os.WriteFile(filepath.Join(e.work, "README.md"), []byte("# demo\nwork in progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("untracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git(e.work, "add", "README.md")
	statusBefore := e.git(e.work, "status", "--porcelain=v1", "--branch")
	headBefore := e.git(e.work, "rev-parse", "HEAD")

	r := e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if want := fmt.Sprintf("%d\tresearch\tresearch-needed\tready-for-plan\tdone\t\t", n); !strings.HasPrefix(r.stdout, want) {
		t.Errorf("stdout %q, want a line starting %q", r.stdout, want)
	}
	// The agent's output streams through, in a plain group off a terminal.
	for _, want := range []string{"== agent: research for #1", "agent: working on research for #1"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr has no %q:\n%s", want, r.stderr)
		}
	}
	if got := e.invocations(); len(got) != 1 || !strings.HasPrefix(got[0], "research 1") {
		t.Errorf("agent invocations %v, want one research", got)
	}

	r = e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-review")
	if r.exit != 0 {
		t.Fatalf("advance --until: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.InReview)
	var steps []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		steps = append(steps, strings.Split(line, "\t")[1])
	}
	if got, want := strings.Join(steps, " "), "plan review implement implement self-review pr"; got != want {
		t.Errorf("--until ran %q, want %q", got, want)
	}
	pulls := e.srv.Pulls()
	if len(pulls) != 1 || pulls[0].Head != "ralph/1-add-a-greeting" {
		t.Fatalf("pull requests %+v", pulls)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("\tpr\tin-progress\tin-review\tdone\t%s/octo/demo/pull/%d\t", e.srv.ServerURL, pulls[0].Number)) {
		t.Errorf("stdout does not show the pull request: %s", r.stdout)
	}
	// Commits are the person's.
	if authors := e.git(e.srv.BareRepo, "log", "--format=%an <%ae>", "main..ralph/1-add-a-greeting"); !strings.Contains(authors, "Mona Lisa <mona@example.com>") || strings.Contains(authors, "github-actions") {
		t.Errorf("commit authors:\n%s", authors)
	}

	// The person's checkout is as it was.
	if got := e.git(e.work, "status", "--porcelain=v1", "--branch"); got != statusBefore {
		t.Errorf("git status changed:\n%s\nwant\n%s", got, statusBefore)
	}
	if got := e.git(e.work, "rev-parse", "HEAD"); got != headBefore {
		t.Errorf("HEAD moved from %s to %s", headBefore, got)
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "README.md")); string(b) != "# demo\nwork in progress\n" {
		t.Errorf("README.md is now %q", b)
	}
	// ralph's own repository is outside the checkout: in the person's cache directory, or, when gh ralph
	// runs as root, in a directory of the run's own that is gone when it ends. The agent's copy of each step
	// is removed when the step ends.
	cache := filepath.Join(e.home, ".cache")
	for _, kv := range e.environ() {
		if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok && v != "" {
			cache = v
		}
	}
	if os.Geteuid() != 0 {
		if repos, _ := filepath.Glob(filepath.Join(cache, "ralph", "*", "git")); len(repos) != 1 {
			t.Errorf("ralph's repositories under %s: %v, want one", cache, repos)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "ralph", "*", "agents", "*")); len(left) != 0 {
		t.Errorf("agent copies left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(e.work, ".git", "ralph")); err == nil {
		t.Errorf("ralph wrote into the checkout's .git directory")
	}

	// status reads what the runs recorded.
	r = e.cli(binary, "status", fmt.Sprint(n))
	for _, want := range []string{"state\tIn Review", "phase\t2 of 2", "pull request\t#2 ", "branch\tralph/1-add-a-greeting"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status has no %q:\n%s", want, r.stdout)
		}
	}
	// In Review is a gate: --until stops there, and says so with its exit status (1), as it did not get
	// where it was asked to.
	r = e.cli(binary, "advance", fmt.Sprint(n), "--until", "done")
	if r.exit != 1 || !strings.Contains(r.stderr, "stopped at In Review before reaching Done") {
		t.Errorf("--until done at a gate: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	plain := e.srv.CreateIssue(maintainer, "Not enrolled", "")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"advance", "99"}, 1, "issue #99 does not exist"},
		{[]string{"advance", fmt.Sprint(plain)}, 1, "add the ralph:build label"},
		{[]string{"advance", "1", "--until", "nowhere"}, 2, "unknown state \"nowhere\" for --until"},
		{[]string{"advance"}, 2, "Usage:"},
		{[]string{"frobnicate"}, 2, "unknown command \"frobnicate\""},
		{[]string{"reject", "1"}, 2, "--reason is required"},
	}
	for _, tt := range tests {
		r := e.cli(binary, tt.args...)
		if r.exit != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, r.exit, r.stderr, tt.code, tt.want)
		}
	}
	// At a person's terminal, not in automation (CI set, as in CI itself, gets gh's automation hint).
	e.vars["GH_ENTERPRISE_TOKEN"], e.vars["CI"], e.vars["GITHUB_ACTIONS"] = "", "", ""
	if r := e.cli(binary, "status"); r.exit != 4 || !strings.Contains(r.stderr, "gh auth login") {
		t.Errorf("without a token: exit %d, %s", r.exit, r.stderr)
	}
}

// Ctrl-C stops the agent and exits 130.
func TestCLIInterrupt(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, fmt.Sprintf("agent:\n  preset: command\n  command: %q\n", `touch "$RALPH_TEST_CONTROL/started"; sleep 60`)+agentEnvYAML)
	marker := filepath.Join(e.control, "started")
	n := e.srv.CreateIssue(maintainer, "Slow", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	cmd := exec.Command(binary, "advance", fmt.Sprint(n))
	cmd.Dir = e.work
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the agent did not start\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v (want exit 130)\n%s%s", err, stdout.String(), stderr.String())
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("stopping took %s", d)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	// Nothing half-recorded: the issue is back where the step started, and the failure is on it.
	e.wantState(n, workflow.ResearchNeeded)
	e.invariants(n)
}

// gh ralph under the real gh: installed from a directory named gh-ralph with a temporary GH_CONFIG_DIR, run
// against the test server as the Enterprise host localhost (port 443), trusting a test CA.
func TestCLIUnderGH(t *testing.T) {
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed (apt-get install -y gh); .ci/run installs it")
	}
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3"})
	dir, ca := servePrivateCA(t, srv)
	e := newCLIEnvOn(t, srv, agentConfig(t), map[string]string{
		"GH_HOST": "localhost", "GH_REPO": "localhost/octo/demo", "GH_ENTERPRISE_TOKEN": "test-token", "SSL_CERT_FILE": ca,
		"GH_CONFIG_DIR": filepath.Join(dir, "gh-config"), "XDG_DATA_HOME": filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CACHE_HOME": filepath.Join(dir, "cache"),
	})
	// The extension: a directory named gh-ralph holding the executable gh-ralph.
	ext := filepath.Join(dir, "gh-ralph")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "gh-ralph"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(gh, "extension", "install", ".")
	install.Dir = ext
	install.Env = e.environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gh extension install: %v\n%s", err, out)
	}

	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.cli(gh, "ralph", "status")
	if r.exit != 0 || !strings.Contains(r.stdout, fmt.Sprintf("Not started\t%d\tAdd a greeting", n)) {
		t.Fatalf("gh ralph status: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	r = e.cli(gh, "ralph", "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("gh ralph advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if !e.branchExists("ralph/1-add-a-greeting") {
		t.Error("advance pushed no branch")
	}
}

// testCertificate makes a CA and a certificate for host (and 127.0.0.1) signed by it.
func testCertificate(t *testing.T, host string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ralph test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{host}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert
}

// gh ralph takes the Action's lock: while an Actions run holds the issue, advance says so and does nothing.
func TestCLIRespectsTheLock(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, agentConfig(t))
	n := e.srv.CreateIssue(maintainer, "Busy", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	e.srv.SetWorkflowRun(77, "in_progress", "")
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: e.srv.URL, GraphQL: e.srv.GraphQLURL, Server: e.srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: e.srv.Client().Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	lk := &lock.Locker{Refs: lock.RESTRefs{API: c}, Runs: c, Lease: time.Hour, Holder: lock.Holder{Kind: "actions", RunID: 77, RunURL: c.RunURL(77)}}
	lease, err := lk.Acquire(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	r := e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 || !strings.Contains(r.stdout, "held") || !strings.Contains(r.stderr+r.stdout, "Actions run 77") {
		t.Errorf("advance of a held issue: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if got := e.invocations(); len(got) != 0 {
		t.Errorf("the agent ran on a held issue: %v", got)
	}
	r = e.cli(binary, "status", fmt.Sprint(n))
	if !strings.Contains(r.stdout, "lock\tActions run 77") {
		t.Errorf("status does not name the holder:\n%s", r.stdout)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("advance after release: exit %d\n%s", r.exit, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
}
