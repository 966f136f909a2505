package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// gh ralph doctor finds each problem of a new repository, one line each with what to do, and no longer
// finds it once it is fixed: first nothing is set up, then init has run, then everything is fixed.
func TestDoctor(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.srv.SetWorkflowPermissions("read", false)
	// Where the agent's CLI gets installed: a place every user may run it from, as npm install -g's
	// /usr/local is (as root, the agent runs as a user of its own; t.TempDir's parents are closed).
	bin, err := os.MkdirTemp("", "ralph-doctor-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	e.env["PATH"] = bin + ":/usr/bin:/bin"

	check := func(golden string, wantCode int) {
		t.Helper()
		code := e.run("doctor")
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\n%s%s", golden, code, wantCode, e.stdout, e.stderr)
		}
		golden2(t, e, golden, e.scrub(e.stdout.String())+"--- stderr\n"+e.scrub(e.stderr.String()))
	}
	check("doctor-new-repository.golden", ExitError)

	if code := e.run("init", "--agent", "claude"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, e.stderr)
	}
	check("doctor-after-init.golden", ExitError)

	// Fix each: the CLI installed, the key exported here, the workflow pushed, the secret stored, Actions
	// allowed to open pull requests.
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env["ANTHROPIC_API_KEY"] = "sk-local"
	e.srv.AddWorkflow(".github/workflows/ralph.yml", "ralph")
	e.srv.SetSecret("ANTHROPIC_API_KEY", "sk-repo")
	e.srv.SetWorkflowPermissions("read", true)
	check("doctor-ready.golden", 0)
	if strings.Contains(e.stdout.String(), "sk-") {
		t.Error("doctor printed a key")
	}

	// A disabled workflow, a workflow that lost its permissions, a broken config (each of its problems on
	// a line of its own).
	e.srv.SetWorkflowState(".github/workflows/ralph.yml", "disabled_manually")
	wf := filepath.Join(e.dir, ".github", "workflows", "ralph.yml")
	b, _ := os.ReadFile(wf)
	if err := os.WriteFile(wf, []byte(strings.Replace(string(b), "  actions: write\n", "  actions: read\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, ".github", "ralph.yml"), []byte("agent:\n  preset: claud\n  timeout: 0s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("doctor-broken.golden", ExitError)
}

// golden2 compares output with testdata/name after the server's address and the test's temporary
// directories are scrubbed.
func golden2(t *testing.T, e *testEnv, name, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, e.dir, "CHECKOUT")
	// doctor's line on the agent's firewall rule: said only where the agent runs as a user of its own (as
	// root), in words that depend on the kernel.
	got = regexp.MustCompile(`(?m)^✓ network: (an|no) owner-match firewall rule.*\n`).ReplaceAllString(got, "")
	got = strings.ReplaceAll(got, e.srv.BareRepo, "ORIGIN")
	golden(t, name, got)
}

// doctor with a token GitHub refuses says so once, with gh's hint, and exits 4 as status and advance do.
func TestDoctorBadToken(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.env["GH_ENTERPRISE_TOKEN"] = "wrong"
	code := e.run("doctor")
	if code != ExitAuth {
		t.Errorf("exit %d, want %d", code, ExitAuth)
	}
	golden2(t, e, "doctor-bad-token.golden", e.scrub(e.stdout.String())+"--- stderr\n"+e.scrub(e.stderr.String()))
}

// SECURITY: doctor quotes what is in the checkout (a workflow file's name, a value of its YAML, a config
// error), which a checked-out branch of someone else's may hold: no control character of it reaches the
// terminal, on a terminal (with colour) or not.
func TestDoctorPrintsNoEscapesOfOthers(t *testing.T) {
	t.Parallel()
	for _, tty := range []bool{true, false} {
		e := newTestEnv(t)
		e.tty, e.color = tty, tty
		if code := e.run("init", "--agent", "claude"); code != 0 {
			t.Fatalf("init: exit %d: %s", code, e.stderr)
		}
		dir := filepath.Join(e.dir, ".github", "workflows")
		hostile := "ci\x1b]0;pwned\x07\x1b[2J\r.yml"
		if err := os.Rename(filepath.Join(dir, "ralph.yml"), filepath.Join(dir, hostile)); err != nil {
			t.Fatal(err)
		}
		e.run("doctor")
		got := e.stdout.String() + e.stderr.String()
		if strings.ContainsAny(got, "\x07\r") || strings.Contains(got, "\x1b]") || strings.Contains(got, "\x1b[2J") {
			t.Errorf("terminal %v: a control character of the workflow's name reached the output: %q", tty, got)
		}
		if !strings.Contains(got, "ci^[]0;pwned^G^[[2J^M.yml") {
			t.Errorf("terminal %v: the workflow's name is not shown in caret notation: %q", tty, got)
		}
	}
}

// Someone without admin rights cannot read the repository's Actions settings nor list its secrets, and
// someone who uses the Action alone has no agent CLI or key on their machine: doctor warns of each (an
// admin can check the settings; the machine's lacks matter to gh ralph advance only), under the heading of
// the door it concerns, and still finds the setup ready, rather than a problem no one in their place can
// fix.
func TestDoctorNotAdmin(t *testing.T) {
	t.Parallel()
	for _, local := range []bool{true, false} {
		e := newTestEnv(t)
		bin := t.TempDir()
		if local {
			if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			e.env["ANTHROPIC_API_KEY"] = "sk-local"
		}
		e.env["PATH"] = bin + ":/usr/bin:/bin"
		if code := e.run("init", "--agent", "claude"); code != 0 {
			t.Fatalf("init: exit %d: %s", code, e.stderr)
		}
		e.srv.AddWorkflow(".github/workflows/ralph.yml", "ralph")
		e.srv.SetSecret("ANTHROPIC_API_KEY", "sk-repo")
		e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.Contains(r.URL.Path, "/actions/permissions") && !strings.HasSuffix(r.URL.Path, "/actions/secrets") {
				return false
			}
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"Must have admin rights to Repository.","status":"403"}`))
			return true
		})
		code := e.run("doctor")
		out := e.stdout.String()
		if code != 0 || strings.Contains(out, "X ") {
			t.Errorf("doctor as a non-admin (CLI here: %v): exit %d\n%s%s", local, code, out, e.stderr)
		}
		// Each warning under its door's heading.
		action, machine := strings.Index(out, doctor.Action.Title()), strings.Index(out, doctor.Machine.Title())
		if both := strings.Index(out, doctor.Both.Title()); both != 0 || action < both || machine < action {
			t.Fatalf("doctor's headings are not both doors, the Action, this machine, in that order:\n%s", out)
		}
		for _, w := range []string{"! cannot read the repository's Actions permissions", "! cannot read the Actions token's default permissions", "! cannot list the repository's secrets"} {
			if i := strings.Index(out, w); i < action || i > machine {
				t.Errorf("(CLI here: %v) %q is not among the Action's checks:\n%s", local, w, out)
			}
		}
		if !local {
			for _, w := range []string{"! claude is not installed", "! agent.env passes ANTHROPIC_API_KEY through, but it is not set here"} {
				if i := strings.Index(out, w); i < machine {
					t.Errorf("%q is not among this machine's checks:\n%s", w, out)
				}
			}
		}
	}
}

// In a private repository, init and doctor suggest narrowing the package registries (network.registries),
// a way out for what the agent read; once narrowed, doctor says nothing of them.
func TestPrivateRepositoryRegistries(t *testing.T) {
	t.Parallel()
	e := newTestEnvOf(t, true)
	if code := e.run("init", "--agent", "claude"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, e.stderr)
	}
	if !strings.Contains(e.stderr.String(), "network.registries") {
		t.Errorf("init does not suggest network.registries for a private repository:\n%s", e.stderr)
	}
	e.run("doctor")
	if !strings.Contains(e.stdout.String()+e.stderr.String(), "! the repository is private and its agent reaches every package registry") {
		t.Errorf("doctor does not suggest network.registries:\n%s%s", e.stdout, e.stderr)
	}
	cfg := filepath.Join(e.dir, ".github", "ralph.yml")
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), "  # registries: []", "  registries: [proxy.golang.org]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.run("doctor")
	if strings.Contains(e.stdout.String()+e.stderr.String(), "reaches every package registry") {
		t.Errorf("doctor still suggests network.registries once it is set:\n%s%s", e.stdout, e.stderr)
	}
}

// doctor says where the documents go, and with documents: separate judges the rules of ralph's documents
// branch too: a rule that would refuse the documents there is a problem naming the branch.
func TestDoctorDocuments(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	if code := e.run("init", "--agent", "claude", "--documents", "separate"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, e.stderr)
	}
	e.srv.AddRuleset("no docs", []string{"refs/heads/ralph/docs/**"}, githubtest.Rule{Type: "file_path_restriction", Parameters: map[string]any{"restricted_file_paths": []string{"thoughts/**"}}})
	e.run("doctor")
	out := e.stdout.String()
	for _, want := range []string{
		"documents: separate: the research, plan and reviews are committed on ralph's own branch ralph/docs/<N>",
		"rule file_path_restriction (ruleset",
		"ralph writes thoughts/shared/research/2026-01-01-GH-0001-example.md",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
}
