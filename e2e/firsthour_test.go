package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// quickStart is the README's quick start: the commands of its first ```sh block under "## Quick start",
// without their comments.
func quickStart(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## Quick start\n")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no ```sh block under ## Quick start")
	}
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, " # "); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestFirstHour is a new user's first hour, through the real gh, as the README's quick start says it:
// install the extension, gh ralph init in a new repository (the agent, its key stored with gh secret set,
// the labels), commit and push, gh ralph doctor finding each problem and, once each is fixed as it says,
// no longer finding it, then enroll, advance --dry-run and status. Every text is checked against a golden
// file (go test ./e2e -run TestFirstHour -update rewrites them).
func TestFirstHour(t *testing.T) {
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed (apt-get install -y gh); .ci/run installs it")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	// A fixed clock: the texts hold times.
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	srv, dir, ca := privateCAHost(t, now)
	// The person's own token: a maintainer's, whose label ralph's sweeps take.
	srv.SetTokenLogin(maintainer)
	srv.SetPermission(maintainer, "admin")
	// Where the agent's CLI gets installed: a place every user may run it from, as npm install -g's
	// /usr/local is (as root, the agent runs as a user of its own).
	bin := filepath.Join(controlDir(t), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newCLIEnvOn(t, srv, "", map[string]string{
		"GH_HOST": "localhost", "GH_ENTERPRISE_TOKEN": "test-token", "SSL_CERT_FILE": ca,
		"GH_CONFIG_DIR": filepath.Join(dir, "gh-config"), "XDG_DATA_HOME": filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CACHE_HOME": filepath.Join(dir, "cache"),
		"PATH": strings.Join([]string{bin, filepath.Dir(gh), filepath.Dir(git), "/usr/bin", "/bin"}, ":"),
		// The clone's remote is a local path, so the repository is GH_REPO's, as -R would say.
		"GH_REPO": "localhost/octo/demo",
	})
	delete(e.vars, "RALPH_AGENT_WRITABLE")
	delete(e.vars, "RALPH_TEST_CONTROL")
	privateCAClone(e, ca)
	// A repository as GitHub creates it: the Actions token is read-only by default and may not open pull
	// requests.
	srv.SetWorkflowPermissions("read", false)
	n := srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	if n != 1 {
		t.Fatalf("the first issue is #%d", n)
	}

	// The extension: a directory named gh-ralph holding the executable gh-ralph, installed by gh as
	// `gh extension install ralph-dev/gh-ralph` installs a release.
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

	run := func(line, stdin string) result {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = e.work
		cmd.Env = e.environ()
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if testing.Verbose() {
			t.Logf("$ %s: exit %d\n%s%s", line, r.exit, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "test-token") || strings.Contains(r.stdout+r.stderr, "sk-ant-") {
			t.Errorf("%s printed a secret", line)
		}
		return r
	}
	check := func(line, golden string, r result, exit int) {
		t.Helper()
		if r.exit != exit {
			t.Errorf("%s: exit %d, want %d\n%s%s", line, r.exit, exit, r.stdout, r.stderr)
		}
		firstHourGolden(t, golden, "$ "+line+"\n"+firewallLine.ReplaceAllString(r.stdout, "")+"--- stderr\n"+scrubFirstHour(r.stderr, dir, e.work))
	}

	cmds := quickStart(t)
	want := []string{"gh extension install", "gh ralph init", "git add", "gh ralph doctor", "gh ralph enroll 1", "gh ralph advance 1 --dry-run", "gh ralph status"}
	if len(cmds) != len(want) {
		t.Fatalf("the README's quick start is %q; this test runs %q", cmds, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(cmds[i], w) {
			t.Fatalf("the README's quick start step %d is %q; this test runs %q", i+1, cmds[i], w)
		}
	}

	// 1. Install: from the directory, as gh installs a release it downloads.
	install := exec.Command(gh, "extension", "install", ".")
	install.Dir = ext
	install.Env = e.environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gh extension install: %v\n%s", err, out)
	}

	// 2. init: the files, the labels, the key stored (gh secret set reads it from standard input here; on a
	// terminal it asks), and what to do next.
	r := run(cmds[1], "sk-ant-first-hour\n")
	check(cmds[1], "1-init.golden", r, 0)
	if v, ok := srv.Secret("ANTHROPIC_API_KEY"); !ok || v != "sk-ant-first-hour" {
		t.Errorf("the secret ANTHROPIC_API_KEY is %q (set: %v)", v, ok)
	}
	if got := len(srv.RepoLabels()); got != 13 {
		t.Errorf("%d labels after init, want 13", got)
	}

	// 3. Commit and push; GitHub then knows the workflow.
	r = run(cmds[2], "")
	if r.exit != 0 {
		t.Fatalf("%s: exit %d\n%s%s", cmds[2], r.exit, r.stdout, r.stderr)
	}
	srv.AddWorkflow(".github/workflows/ralph.yml", "ralph")

	// 4. doctor finds what is left, and each fix it names makes it go away.
	r = run(cmds[3], "")
	check(cmds[3], "2-doctor-problems.golden", r, 1)
	// The agent's CLI (npm install -g @anthropic-ai/claude-code puts it on PATH).
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The key here, for gh ralph advance on this machine.
	e.vars["ANTHROPIC_API_KEY"] = "sk-ant-local"
	// The repository setting, with the command doctor printed, through the real gh.
	fix := regexp.MustCompile(`gh api -X PUT \S+ -F can_approve_pull_request_reviews=true`).FindString(r.stdout)
	if fix == "" {
		t.Fatalf("doctor does not say how to let Actions open pull requests:\n%s", r.stdout)
	}
	if r := run(fix, ""); r.exit != 0 {
		t.Fatalf("%s: exit %d\n%s%s", fix, r.exit, r.stdout, r.stderr)
	}
	if !srv.CanCreatePulls() {
		t.Error("the fix doctor printed did not let Actions open pull requests")
	}
	r = run(cmds[3], "")
	check(cmds[3], "3-doctor-ready.golden", r, 0)

	// 5. enroll, 6. advance --dry-run, 7. status.
	r = run(cmds[4], "")
	check(cmds[4], "4-enroll.golden", r, 0)
	if !strings.Contains(strings.Join(srv.Labels(n), ","), workflow.LabelBuild) {
		t.Errorf("#1 has no %s after enroll", workflow.LabelBuild)
	}
	before := len(srv.Requests())
	r = run(cmds[5], "")
	check(cmds[5], "5-advance-dry-run.golden", r, 0)
	for _, req := range srv.Requests()[before:] {
		if req.Write() {
			t.Errorf("advance --dry-run wrote: %s %s", req.Method, req.Path)
		}
	}
	r = run(cmds[6], "")
	check(cmds[6], "6-status.golden", r, 0)

	// 8. An issue someone without write access labeled: no sweep takes it, status says why and what to do,
	// and the person's enroll makes the label theirs.
	srv.SetPermission("mallory", "triage")
	m := srv.CreateIssue("mallory", "Add a farewell", "Say goodbye.")
	srv.AddLabel(m, workflow.LabelBuild, "mallory")
	r = run("gh ralph status", "")
	check("gh ralph status", "7-status-outsider.golden", r, 0)
	if !strings.Contains(r.stderr, "ralph:build was added by @mallory, who may not drive ralph") || !strings.Contains(r.stdout, "a writer (enroll)") {
		t.Errorf("status does not say why #%d waits:\n%s%s", m, r.stdout, r.stderr)
	}
	r = run(fmt.Sprintf("gh ralph enroll %d", m), "")
	check(fmt.Sprintf("gh ralph enroll %d", m), "8-enroll-outsider.golden", r, 0)
	if r := run("gh ralph status", ""); r.exit != 0 || strings.Contains(r.stdout+r.stderr, "may not drive ralph") {
		t.Errorf("status after the maintainer's enroll: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r := run("gh ralph version", ""); r.exit != 0 || !strings.HasPrefix(r.stdout, "gh ralph version ") {
		t.Errorf("gh ralph version: exit %d: %s%s", r.exit, r.stdout, r.stderr)
	}

	// 9. Shell completion of gh ralph, as README and completion --help say to set it up: the commands, and
	// the enrolled issues, which gh ralph asks GitHub for through gh.
	if _, err := os.Stat(bashCompletionLib); err != nil {
		t.Logf("bash-completion is not installed (%s): completion not tried", bashCompletionLib)
		return
	}
	script := filepath.Join(dir, "complete.bash")
	if err := os.WriteFile(script, []byte(completeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run("bash --noprofile --norc "+script, "gh ralph adv\ngh ralph advance \n")
	for _, want := range []string{"gh ralph adv -> advance\n", "gh ralph advance  -> 1 2\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("completion: want %q\n%s%s", want, r.stdout, r.stderr)
		}
	}
}

// privateCAClone makes the person's clone one of a host with a private CA, as an Enterprise server often
// is: origin is https://localhost/octo/demo.git, served over the test CA's TLS. The person's own git trusts
// that CA and has its credential through the clone's config (as a credential helper gives it); ralph's git
// reads no config of the person's and, in the person's environment, only SSL_CERT_FILE names the CA, as
// the README says.
func privateCAClone(e *cliEnv, ca string) {
	e.t.Helper()
	e.git(e.work, "remote", "set-url", "origin", "https://localhost/octo/demo.git")
	e.git(e.work, "config", "http.sslCAInfo", ca)
	e.git(e.work, "config", "http.extraHeader", "AUTHORIZATION: basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:test-token")))
}

// firewallLine is doctor's line on the agent's firewall rule, which it says only where the agent runs as a
// user of its own (as root), and whose words depend on the kernel.
var firewallLine = regexp.MustCompile(`(?m)^✓ network: (an|no) owner-match firewall rule.*\n`)

// scrubFirstHour replaces what differs from run to run: temporary directories, and what differs from
// machine to machine: the firewall's line.
func scrubFirstHour(s, dir, work string) string {
	s = strings.ReplaceAll(s, work, "CHECKOUT")
	s = firewallLine.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, dir, "TMP")
}

func firstHourGolden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "firsthour", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test ./e2e -run TestFirstHour -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./e2e -run TestFirstHour -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// privateCAHost serves a GitHub test server on port 443 of localhost (the API under /api/v3, git over
// HTTPS, a fixed clock) with a certificate of a private CA, whose PEM file is ca in the test's directory dir.
func privateCAHost(t *testing.T, now time.Time) (srv *githubtest.Server, dir, ca string) {
	t.Helper()
	srv = githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", Now: func() time.Time { return now }, GitHTTP: true})
	dir, ca = servePrivateCA(t, srv)
	return srv, dir, ca
}

// servePrivateCA serves srv over HTTPS on port 443 of localhost with a certificate of a private CA, whose
// PEM file is ca in the test's directory dir.
func servePrivateCA(t *testing.T, srv *githubtest.Server) (dir, ca string) {
	t.Helper()
	caPEM, cert := testCertificate(t, "localhost")
	ln := listen443(t)
	https := httptest.NewUnstartedServer(srv)
	https.Listener.Close()
	https.Listener = ln
	https.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	https.StartTLS()
	t.Cleanup(https.Close)

	dir = t.TempDir()
	ca = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, ca
}
