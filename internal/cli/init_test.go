package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

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
	// Without a terminal to ask on, the agent is the default, and init says so.
	if !strings.Contains(e.stderr.String(), "no terminal to ask which agent on: setting up claude") {
		t.Errorf("init without a terminal does not say which agent it chose:\n%s", e.stderr)
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
	want := config.Default()
	want.Agent.Env["ANTHROPIC_API_KEY"] = ""
	if diff := cmp.Diff(want, cfg, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the written config is not the defaults with claude's key (-want +written):\n%s", diff)
	}
	if string(cfgBytes) != string(config.Reference(config.AgentChoice{Preset: "claude", Keys: []string{"ANTHROPIC_API_KEY"}})) {
		t.Errorf("the written config is not the reference:\n%s", cfgBytes)
	}
	for _, want := range []string{"model:", "max_turns:", "max_cost:", "landlock:", "lock_lease:", "project:"} {
		if !strings.Contains(string(cfgBytes), want) {
			t.Errorf("the written config does not mention %s", want)
		}
	}
	if strings.Contains(string(cfgBytes), "not built in yet") {
		t.Errorf("the written config says the presets are not built in:\n%s", cfgBytes)
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

	// A changed file is kept unless --force, and what is missing is still set up: a person who edited their
	// files and lost a label runs init again, as doctor says, and gets the label.
	if err := os.WriteFile(wf, append(got, []byte("# mine\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.DeleteRepoLabel("ralph:done")
	if code := e.run("init"); code != 0 || !strings.Contains(e.stderr.String(), ".github/workflows/ralph.yml differs from what init writes; kept as it is") ||
		!strings.Contains(e.stdout.String(), "created label ralph:done") {
		t.Errorf("init over a changed file, a label missing: exit %d: %s%s", code, e.stdout, e.stderr)
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
	for _, want := range []string{"cli/gh-extension-precompile@", "build_script_override: script/build.sh", "workflow_dispatch:", "script/pin-images.sh"} {
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

// init takes the agent by flag, passes its key in the config and the workflow, stores it as a secret
// with gh secret set when asked to, and says what to change in the repository's settings.
func TestInitAgentSecretAndSettings(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.srv.SetWorkflowPermissions("read", false)
	if code := e.run("init", "--agent", "codex", "--set-secret"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	cfgBytes, _ := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
	cfg, err := config.Parse(".github/ralph.yml", cfgBytes)
	if err != nil || cfg.Agent.Preset != "codex" || len(cfg.Agent.Env) != 1 || cfg.Agent.Env["OPENAI_API_KEY"] != "" {
		t.Errorf("config: %+v, %v", cfg.Agent, err)
	}
	wf, _ := os.ReadFile(filepath.Join(e.dir, ".github", "workflows", "ralph.yml"))
	if !strings.Contains(string(wf), "OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}") || strings.Contains(string(wf), "ANTHROPIC") {
		t.Errorf("the workflow does not pass codex's key:\n%s", wf)
	}
	host := strings.TrimPrefix(e.srv.ServerURL, "https://")
	if want := [][]string{{"secret", "set", "OPENAI_API_KEY", "--repo", host + "/octo/demo"}}; !cmp.Equal(e.gh, want) {
		t.Errorf("gh ran %v, want %v", e.gh, want)
	}
	for _, want := range []string{
		"GitHub Actions may not create pull requests in octo/demo",
		"Settings → Actions", // the hint names the settings page
		"Allow GitHub Actions to create and approve pull requests",
		"can_approve_pull_request_reviews=true",
		"gh ralph doctor",
	} {
		if want == "Settings → Actions" {
			want = e.srv.ServerURL + "/octo/demo/settings/actions"
		}
		if !strings.Contains(e.stderr.String(), want) {
			t.Errorf("init's next steps do not say %q:\n%s", want, e.stderr)
		}
	}
	if strings.Contains(e.stderr.String(), "gh secret set OPENAI_API_KEY") {
		t.Errorf("init asks to set a secret it set:\n%s", e.stderr)
	}

	// Run again without --agent: the config's agent is kept, nothing changes.
	e.gh = nil
	if code := e.run("init"); code != 0 || e.stdout.String() != "" {
		t.Errorf("init again: exit %d: %s%s", code, e.stdout, e.stderr)
	}
}

// On a terminal, init asks for the agent and whether to store its key; the answer "n" leaves the secret
// to the person, and the next steps say how.
func TestInitAsks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		answers string
		key     string
		set     bool
	}{
		{"gemini\n\ny\n", "GEMINI_API_KEY", true},
		{"\n\nn\n", "ANTHROPIC_API_KEY", false},
	} {
		e := newTestEnv(t)
		e.stdin, e.ttyIn, e.tty = tt.answers, true, true
		if code := e.run("init"); code != 0 {
			t.Fatalf("%q: exit %d: %s", tt.answers, code, e.stderr)
		}
		if !strings.Contains(e.stderr.String(), "? Which agent runs the steps") {
			t.Errorf("%q: init did not ask:\n%s", tt.answers, e.stderr)
		}
		cfgBytes, _ := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
		if !strings.Contains(string(cfgBytes), "    "+tt.key+": \"\"") {
			t.Errorf("%q: the config does not pass %s:\n%s", tt.answers, tt.key, cfgBytes)
		}
		if got := len(e.gh) == 1; got != tt.set {
			t.Errorf("%q: gh ran %v", tt.answers, e.gh)
		}
		if !tt.set && !strings.Contains(e.stderr.String(), "gh secret set "+tt.key) {
			t.Errorf("%q: the next steps do not say how to store the key:\n%s", tt.answers, e.stderr)
		}
	}
}

// TestCommentsDoNotCancelSteps: GitHub keeps one pending run per concurrency group and cancels an older
// pending one, so a /ralph comment must not share the issue's group with the chain's step runs.
func TestCommentsDoNotCancelSteps(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Concurrency struct {
				Group            string `yaml:"group"`
				CancelInProgress bool   `yaml:"cancel-in-progress"`
			} `yaml:"concurrency"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	c := wf.Jobs["ralph"].Concurrency
	// The first alternative of the group expression is the comment's own group, unique to its run.
	want := "ralph-${{ github.event_name == 'issue_comment' && format('comment-{0}', github.run_id) || github.event.issue.number || inputs.issue"
	if !strings.HasPrefix(c.Group, want) {
		t.Errorf("the ralph job's concurrency group is %q, want a comment's own group first: %q…", c.Group, want)
	}
	// So do a review's and a check's: before the pull request's number, which is not the issue's.
	if own := "|| inputs.issue || contains(fromJSON('[\"pull_request_review\",\"check_suite\",\"workflow_run\"]'), github.event_name) && format('{0}-{1}', github.event_name, github.run_id) || github.event.pull_request.number"; !strings.Contains(c.Group, own) {
		t.Errorf("the ralph job's concurrency group is %q, want reviews and checks in groups of their own: %q", c.Group, own)
	}
	if c.CancelInProgress {
		t.Errorf("cancel-in-progress is true: a new event would kill a running step")
	}
}

// TestTimeoutsFitASweep: a scheduled sweep advances up to sweep.max issues in one job, each step bounded by
// agent.timeout, so a job that sweeps must not be killed sooner (10 minutes more for clone, verify, push).
func TestTimeoutsFitASweep(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	want := cfg.Sweep.Max*int(cfg.Agent.Timeout.Minutes()) + 10
	for _, job := range []struct{ file, name string }{{"ralph.yml", "ralph"}, {"sweep.yml", "sweep"}} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", job.file))
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				TimeoutMinutes int `yaml:"timeout-minutes"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatal(err)
		}
		if got := wf.Jobs[job.name].TimeoutMinutes; got != want {
			t.Errorf("%s: job %s has timeout-minutes %d, want sweep.max × agent.timeout + 10 = %d × %v + 10 = %d",
				job.file, job.name, got, cfg.Sweep.Max, cfg.Agent.Timeout, want)
		}
	}
}

// TestNoRunWithoutWork: the events ralph would only log and ignore end before a runner starts, in the
// job's if: (the action's own checks stay: the if: only saves the runner-minutes).
func TestNoRunWithoutWork(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			If string `yaml:"if"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	cond := wf.Jobs["ralph"].If
	for _, want := range []string{
		// Only people of the repository start a run with a comment: anyone else's /ralph starts none (and
		// gets no reply to quote them).
		"(github.event_name != 'issue_comment' || (startsWith(github.event.comment.body, '/ralph') &&\n" +
			"  contains(fromJSON('[\"OWNER\",\"MEMBER\",\"COLLABORATOR\"]'), github.event.comment.author_association)))",
		"(github.event_name != 'issues' || github.event.label.name == 'ralph:build')",
		"(github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository)",
	} {
		if !strings.Contains(cond, want) {
			t.Errorf("the ralph job's if: has no %s:\n%s", want, cond)
		}
	}
}

// A command of one's own named by a path under one's home runs here and not on the Action's runner: init
// and doctor say so, and doctor still counts it no problem.
func TestInitWarnsOfAMachinePath(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	agentPath := filepath.Join(e.home, "bin", "my-agent")
	if err := os.MkdirAll(filepath.Dir(agentPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code := e.run("init", "--agent", "command", "--agent-command", agentPath+" --yes"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	want := "agent.command runs " + agentPath + ", a path on this machine that the Action's runner does not have: commit the program to the repository"
	if !strings.Contains(e.stderr.String(), "warning: "+want) {
		t.Errorf("init does not warn %q:\n%s", want, e.stderr)
	}
	e.run("doctor")
	if !strings.Contains(e.stdout.String(), "\n! "+want) {
		t.Errorf("doctor does not warn %q:\n%s", want, e.stdout)
	}
	if strings.Contains(e.stderr.String(), "problems found") && strings.Contains(e.stdout.String(), "X agent.command") {
		t.Errorf("doctor counts the path a problem:\n%s", e.stdout)
	}
}

// A typo in init's question is asked again, and the secret's question names it.
func TestInitAsksAgainOnATypo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.stdin, e.ttyIn, e.tty = "claud\ngemini\n\ny\n", true, true
	if code := e.run("init"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	if got, want := strings.Count(e.stderr.String(), "? Which agent runs the steps"), 2; got != want {
		t.Errorf("init asked %d times, want %d:\n%s", got, want, e.stderr)
	}
	if !strings.Contains(e.stderr.String(), `unknown agent "claud"`) {
		t.Errorf("init does not say what was wrong with the answer:\n%s", e.stderr)
	}
	cfgBytes, _ := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
	if !strings.Contains(string(cfgBytes), "    GEMINI_API_KEY: \"\"") {
		t.Errorf("the config does not pass GEMINI_API_KEY:\n%s", cfgBytes)
	}
	if !strings.Contains(e.stderr.String(), "storing the repository secret GEMINI_API_KEY: paste the agent's API key when gh asks") {
		t.Errorf("init does not name the secret gh asks for:\n%s", e.stderr)
	}
}

// SECURITY: init writes its two files only as regular files inside the checkout. A link the checkout
// holds where init writes (a file, .github or .github/workflows: a branch someone else wrote, checked
// out) would have init create or, with --force, overwrite a file elsewhere (~/.bashrc); init refuses
// it, changes nothing, and no file outside the checkout is written.
func TestInitWritesNoFileThroughALink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		link string // in the checkout
		to   func(outside string) string
	}{
		{"dangling workflow", ".github/workflows/ralph.yml", func(o string) string { return filepath.Join(o, "new-file") }},
		{"existing config", ".github/ralph.yml", func(o string) string { return filepath.Join(o, "bashrc") }},
		{".github", ".github", func(o string) string { return o }},
		{"workflows", ".github/workflows", func(o string) string { return o }},
		{"inside", ".github/ralph.yml", func(string) string { return "../README.md" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			outside := t.TempDir()
			bashrc := filepath.Join(outside, "bashrc")
			if err := os.WriteFile(bashrc, []byte("export PS1=mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			readme := filepath.Join(e.dir, "README.md")
			if err := os.WriteFile(readme, []byte("# mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(e.dir, filepath.FromSlash(c.link))
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(c.to(outside), link); err != nil {
				t.Fatal(err)
			}
			code := e.run("init", "--agent", "claude", "--force")
			if code == 0 {
				t.Errorf("init wrote through the link %s: exit 0\n%s%s", c.link, e.stdout, e.stderr)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("init wrote outside the checkout: %v", entries)
			}
			for p, want := range map[string]string{bashrc: "export PS1=mine\n", readme: "# mine\n"} {
				if b, _ := os.ReadFile(p); string(b) != want {
					t.Errorf("init overwrote %s: %q", p, b)
				}
			}
			if !strings.Contains(e.stderr.String(), "link") {
				t.Errorf("init does not say why: %s", e.stderr)
			}
		})
	}
}

// init asks where the documents go (a typo is asked again) and writes the answer; without a terminal it
// keeps the default and says so; --documents answers, and a bad value changes nothing.
func TestInitDocuments(t *testing.T) {
	t.Parallel()
	read := func(t *testing.T, e *testEnv) config.Config {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(".github/ralph.yml", b)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	t.Run("asked", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		e.stdin, e.ttyIn, e.tty = "claude\nseparat\nseparate\nn\n", true, true
		if code := e.run("init"); code != 0 {
			t.Fatalf("exit %d: %s", code, e.stderr)
		}
		if got := strings.Count(e.stderr.String(), "? Where are the research, plan and reviews committed"); got != 2 {
			t.Errorf("init asked %d times, want 2:\n%s", got, e.stderr)
		}
		if !strings.Contains(e.stderr.String(), `unknown answer "separat": answer branch or separate`) {
			t.Errorf("init does not say what was wrong with the answer:\n%s", e.stderr)
		}
		if got := read(t, e).Documents; got != config.DocumentsSeparate {
			t.Errorf("documents = %q, want separate", got)
		}
		// Run again with no terminal: the config's answer is kept, nothing changes.
		e.stdin, e.ttyIn, e.tty = "", false, false
		if code := e.run("init"); code != 0 || strings.Contains(e.stderr.String(), "no terminal to ask where the documents go") {
			t.Errorf("init again: exit %d: %s", code, e.stderr)
		}
		if got := read(t, e).Documents; got != config.DocumentsSeparate {
			t.Errorf("documents after init again = %q, want separate", got)
		}
	})
	t.Run("no terminal", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		if code := e.run("init", "--agent", "claude"); code != 0 {
			t.Fatalf("exit %d: %s", code, e.stderr)
		}
		if !strings.Contains(e.stderr.String(), "no terminal to ask where the documents go: keeping documents: branch") {
			t.Errorf("init does not say it kept the default:\n%s", e.stderr)
		}
		if got := read(t, e).Documents; got != config.DocumentsBranch {
			t.Errorf("documents = %q, want branch", got)
		}
	})
	t.Run("flag", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		if code := e.run("init", "--agent", "claude", "--documents", "separate"); code != 0 {
			t.Fatalf("exit %d: %s", code, e.stderr)
		}
		if got := read(t, e).Documents; got != config.DocumentsSeparate {
			t.Errorf("documents = %q, want separate", got)
		}
		bad := newTestEnv(t)
		if code := bad.run("init", "--agent", "claude", "--documents", "pr"); code == 0 || !strings.Contains(bad.stderr.String(), `unknown mode "pr" for --documents; use one of: branch, separate`) {
			t.Errorf("--documents pr: exit %d: %s", code, bad.stderr)
		}
		if _, err := os.Stat(filepath.Join(bad.dir, ".github", "ralph.yml")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a bad --documents wrote the config (%v)", err)
		}
	})
}
