package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rhysd/actionlint"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// lint runs actionlint in-process on a workflow file.
func lint(t *testing.T, path string) {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{WorkingDir: filepath.Dir(path), LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint %s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
}

// A check that the linter finds what it should: a test that cannot fail is worse than none.
func TestLintCatchesMistakes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(p, []byte("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{WorkingDir: filepath.Dir(p), LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(p)
	errs, err := l.Lint(p, content, nil)
	if err != nil || len(errs) == 0 {
		t.Errorf("actionlint found nothing wrong with github.nope (%v)", err)
	}
}

func TestInit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	// One label exists already, with its own colour: init leaves it alone.
	e.srv.CreateIssue("mona", "x", "", "ralph:build")

	if code := e.run("init"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	wf := filepath.Join(e.dir, ".github", "workflows", "ralph.yml")
	lint(t, wf)
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(wf)
	if !bytes.Equal(got, example) {
		t.Errorf("init's workflow differs from examples/ralph.yml: copy one to the other (internal/cli/templates/workflow.yml)")
	}
	for _, want := range []string{"issues:", "issue_comment:", "workflow_dispatch:", "schedule:", "pull_request:", "concurrency:", "permissions:", "types: [closed]"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the workflow has no %q", want)
		}
	}
	cfgBytes, err := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(".github/ralph.yml", cfgBytes)
	if err != nil {
		t.Fatalf("the written config does not parse: %v", err)
	}
	if diff := cmp.Diff(config.Default(), cfg, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the written config is not the defaults (-default +written):\n%s", diff)
	}

	c := e.client()
	labels, err := c.Labels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ghapi.Label{}
	for _, l := range labels {
		byName[l.Name] = l
	}
	if len(labels) != 13 {
		t.Errorf("%d labels, want 13: %v", len(labels), labels)
	}
	for _, l := range Labels() {
		have, ok := byName[l.Name]
		if !ok {
			t.Errorf("no label %s", l.Name)
			continue
		}
		if l.Name == "ralph:build" {
			continue // existed before
		}
		if have.Color != l.Color || have.Description != l.Description || l.Description == "" {
			t.Errorf("label %s: %+v, want %+v", l.Name, have, l)
		}
	}

	// Again: nothing to do.
	before := len(e.srv.Requests())
	if code := e.run("init"); code != 0 {
		t.Fatalf("second init: exit %d: %s", code, e.stderr)
	}
	if e.stdout.String() != "" {
		t.Errorf("second init changed something: %s", e.stdout)
	}
	for _, r := range e.srv.Requests()[before:] {
		if r.Method != "GET" {
			t.Errorf("second init wrote: %s %s", r.Method, r.Path)
		}
	}

	// A changed file is kept unless --force.
	if err := os.WriteFile(wf, append(got, []byte("# mine\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := e.run("init"); code != ExitError || !strings.Contains(e.stderr.String(), ".github/workflows/ralph.yml already exist(s) and differ(s)") {
		t.Errorf("init over a changed file: exit %d: %s", code, e.stderr)
	}
	if now, _ := os.ReadFile(wf); !bytes.HasSuffix(now, []byte("# mine\n")) {
		t.Error("init overwrote a changed file without --force")
	}
	if code := e.run("init", "--force"); code != 0 || !strings.Contains(e.stdout.String(), "overwrote .github/workflows/ralph.yml") {
		t.Errorf("init --force: exit %d: %s %s", code, e.stdout, e.stderr)
	}
	if now, _ := os.ReadFile(wf); !bytes.Equal(now, example) {
		t.Error("init --force did not restore the workflow")
	}
}

// The release workflow lints clean too.
func TestReleaseWorkflowLints(t *testing.T) {
	p, err := filepath.Abs(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lint(t, p)
	b, _ := os.ReadFile(p)
	for _, want := range []string{"cli/gh-extension-precompile@v2", "build_script_override: script/build.sh", `- "v*"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("release.yml has no %q", want)
		}
	}
}

func (e *testEnv) client() *ghapi.Client {
	e.t.Helper()
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: e.srv.URL, GraphQL: e.srv.GraphQLURL, Server: e.srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: e.srv.Client().Transport,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// Every checkout in the workflows users copy leaves no credential behind: ralph pushes with its own, and
// a persisted one would be one more thing to keep from the agent.
func TestWorkflowsDoNotPersistCredentials(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	b, err := templates.ReadFile("templates/workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	files["init's workflow"] = string(b)
	for _, name := range []string{"ralph.yml", "sweep.yml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		files["examples/"+name] = string(b)
	}
	for name, text := range files {
		checkouts := strings.Count(text, "uses: actions/checkout@")
		if checkouts == 0 || strings.Count(text, "persist-credentials: false") != checkouts {
			t.Errorf("%s: %d checkouts, not each with persist-credentials: false", name, checkouts)
		}
	}
}
