// Package demo is `gh ralph demo`: ralph's main job on a fresh machine. It takes one issue from its label
// to a pull request against a GitHub served in this process (internal/githubtest, a bare repository in a
// temporary directory) with a scripted agent, through the same engine, boundary and git as a real run,
// and prints what a person would see on GitHub: the steps, the status comment, the documents and the pull
// request. It needs git and nothing else: no gh login, no repository, no network, no model key.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// agentScript follows ralph's agent protocol (RALPH_COMMAND, RALPH_ARTIFACT; the prompt on standard input)
// and writes, in a few lines, what a real agent would: the documents of each step and the change.
const agentScript = `#!/bin/sh
# ralph's demo agent: a script in place of Claude Code, Codex or Gemini.
set -eu
case "$RALPH_COMMAND" in
research)
  printf '# Research: add a greeting\n\nThe repository holds one file, README.md: the greeting belongs at its end.\n' > "$RALPH_ARTIFACT" ;;
plan)
  printf '# Plan: add a greeting\n\nOne phase.\n\n## Phase 1: Greet\n\nAppend "Hello from ralph!" to README.md.\n' > "$RALPH_ARTIFACT" ;;
review)
  printf '# Review\n\nOne small phase that does what the issue asks.\n\nVERDICT: APPROVED\n' > "$RALPH_ARTIFACT" ;;
implement)
  printf '\nHello from ralph!\n' >> README.md ;;
self-review)
  printf '# Self-review\n\nThe branch adds the greeting and nothing else.\n\nVERDICT: APPROVED\n' > "$RALPH_ARTIFACT" ;;
triage)
  printf 'Clear enough.\n\nDECISION: plan\n' > "$RALPH_ARTIFACT" ;;
esac
echo "demo agent: $RALPH_COMMAND done"
`

// Person is who files and labels the demo's issue.
const person = "mona"

// Run runs the demo, printing to out what a person reads and to log ralph's log.
func Run(ctx context.Context, out, log io.Writer) (err error) {
	if _, lerr := exec.LookPath("git"); lerr != nil {
		return errors.New("the demo needs git on PATH")
	}
	dir, err := os.MkdirTemp("", "ralph-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// As root, the agent runs as a user of its own: it must reach its program.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	tb := &tb{dir: dir}
	defer tb.cleanup()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("the demo's GitHub: %s", string(f))
		}
	}()
	srv := githubtest.New(tb, githubtest.Options{TokenLogin: person})
	srv.SetPermission(person, "admin")

	// The repository, as a person's clone with ralph's config committed and pushed.
	agentPath := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(agentPath, []byte(agentScript), 0o755); err != nil {
		return err
	}
	work := filepath.Join(dir, "work")
	cfgYAML := fmt.Sprintf("agent:\n  preset: command\n  command: %s\nchain: false\n", agentPath)
	if err := setUp(ctx, srv.BareRepo, work, cfgYAML); err != nil {
		return err
	}
	cfg, err := compose.LoadConfig(work, "")
	if err != nil {
		return err
	}

	n := srv.CreateIssue(person, "Add a greeting", "README.md should greet its readers.")
	srv.AddLabel(n, workflow.LabelBuild, person)
	fmt.Fprintf(out, "%s filed issue #%d %q on octo/demo (a GitHub served in this process) and added the %s label.\n\n", person, n, "Add a greeting", workflow.LabelBuild)

	gh, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: http.DefaultTransport,
	})
	if err != nil {
		return err
	}
	// ralph's repository is kept under the cache directory, named after the checkout: the demo's own.
	environ := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	eng, cleanup, err := compose.Build(ctx, compose.Door{
		GitHub: gh, Token: "test-token", Config: cfg, Checkout: work,
		// The agent's script is outside its places: Landlock lets it read only what it is told.
		ReadOnly: []string{agentPath},
		Log:      logger{w: log},
		Holder:   lock.LocalHolder("demo"),
		Origin:   engine.Origin{Label: "gh ralph demo"},
		Author:   git.Signature{Name: "ralph", Email: "ralph@users.noreply.github.com"},
		Environ:  environ, Transport: http.DefaultTransport, Now: time.Now,
	})
	if err != nil {
		return err
	}
	defer cleanup()

	fmt.Fprintln(out, "ralph's steps, one per run (in GitHub Actions each is a workflow run):")
	for range 20 {
		res, err := eng.Advance(ctx, n)
		if err != nil {
			return fmt.Errorf("#%d: %w", n, err)
		}
		states := title(res.State)
		if res.From != res.State {
			states = title(res.From) + " → " + states
		}
		fmt.Fprintf(out, "  %-12s %s\n", res.Step, states)
		if res.State == workflow.InReview || !res.Continue {
			break
		}
	}

	fmt.Fprintf(out, "\nWhat a person sees on GitHub: issue #%d, labeled %s\n", n, strings.Join(srv.Labels(n), ", "))
	for _, c := range srv.Comments(n) {
		fmt.Fprintf(out, "\n── comment by %s ──\n%s\n", c.User, rendered(c.Body))
	}
	for _, p := range srv.Pulls() {
		fmt.Fprintf(out, "\n── pull request #%d by %s: %s (%s → %s) ──\n%s\n", p.Number, p.Author, p.Title, p.Head, p.Base, rendered(p.Body))
	}
	fmt.Fprintf(out, "\nThat was ralph against a GitHub of its own. Next, your repository: gh ralph init in a clone of it (README: Quick start).\n")
	if msgs := tb.failures(); len(msgs) > 0 {
		return fmt.Errorf("the demo's GitHub found a fault: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// setUp clones bare into work and commits and pushes the config.
func setUp(ctx context.Context, bare, work, cfgYAML string) error {
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Mona", "GIT_AUTHOR_EMAIL=mona@example.com", "GIT_COMMITTER_NAME=Mona", "GIT_COMMITTER_EMAIL=mona@example.com")
	run := func(dir string, args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
		}
		return nil
	}
	if err := run("", "clone", "-q", bare, work); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(work, ".github"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, ".github", "ralph.yml"), []byte(cfgYAML), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", ".github"}, {"commit", "-q", "-m", "Set up ralph"}, {"push", "-q", "origin", "HEAD:main"}} {
		if err := run(work, args...); err != nil {
			return err
		}
	}
	return nil
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	workflowBox = regexp.MustCompile(`(?s)<details><summary>Workflow</summary>.*?</details>`)
	detailsTag  = regexp.MustCompile(`</?details[^>]*>|<summary>[^<]*</summary>`)
	blankLines  = regexp.MustCompile(`\n{3,}`)
)

// rendered is a comment as GitHub shows it, roughly: no HTML comments (ralph's record and markers), the
// folded diagram of the workflow as one line, the other folds open.
func rendered(body string) string {
	body = htmlComment.ReplaceAllString(body, "")
	body = workflowBox.ReplaceAllString(body, "▸ Workflow (a diagram of ralph's states, folded)")
	body = detailsTag.ReplaceAllString(body, "")
	return strings.TrimSpace(blankLines.ReplaceAllString(body, "\n\n"))
}

func title(s workflow.State) string {
	if s == "" {
		return "not enrolled"
	}
	return s.Title()
}

// logger is the engine's log, plain lines; the agent's output is shown as it comes.
type logger struct{ w io.Writer }

func (l logger) Infof(format string, args ...any) { fmt.Fprintf(l.w, format+"\n", args...) }
func (l logger) Warnf(format string, args ...any) { fmt.Fprintf(l.w, "warning: "+format+"\n", args...) }
func (l logger) Untrusted(title string) (io.Writer, func()) {
	fmt.Fprintf(l.w, "== %s\n", title)
	return l.w, func() {}
}

// fatal is the demo's GitHub stopping, as a test's Fatalf stops it.
type fatal string

// tb is what the in-process GitHub needs of a test: temporary directories, cleanups, and somewhere to
// report what it found wrong (githubtest.TB), without the testing package.
type tb struct {
	dir      string
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func (t *tb) Helper() {}
func (t *tb) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "github-")
	if err != nil {
		panic(fatal(err.Error()))
	}
	return d
}
func (t *tb) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}
func (t *tb) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}
func (t *tb) Fatalf(format string, args ...any) { panic(fatal(fmt.Sprintf(format, args...))) }

func (t *tb) failures() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.errs...)
}

func (t *tb) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
