// Package action is ralph's GitHub Actions door: it reads the inputs and the event, builds the engine, runs
// the command, and reports through outputs, the step summary, log groups and annotations.
package action

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sethvargo/go-githubactions"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/enginelock"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Env is the process environment the action reads: getenv for single variables (through go-githubactions'
// WithGetenv, so tests never touch the real environment) and the whole list for the agent.
type Env struct {
	Getenv  func(string) string
	Environ []string
	Stdout  io.Writer
}

// ExitError asks main to exit with Code after the action has reported the failure itself.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Run is the action's entry point.
func Run(ctx context.Context, env Env) error {
	a := githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout))
	r := &runner{a: a, env: env}
	err := r.run(ctx)
	if err != nil {
		var cerr *config.Error
		var ex *ExitError
		var se *doctor.StartError
		switch {
		case errors.As(err, &ex), errors.As(err, &se): // already reported, one problem an annotation
		case errors.As(err, &cerr):
			a.WithFieldsMap(map[string]string{"file": cerr.File, "line": strconv.Itoa(cerr.Line), "col": strconv.Itoa(cerr.Column), "title": "ralph: invalid config"}).Errorf("%s", err)
		default:
			a.Errorf("%s", err)
		}
		r.summary("failed", err)
		code := 1
		if isAuth(err) {
			code = ExitAuth
		}
		return &ExitError{Code: code, Err: err}
	}
	return nil
}

// ExitAuth is the exit status of a run whose token is missing or refused, as gh exits when it is not
// authenticated.
const ExitAuth = 4

// AuthError is a token that is missing (or that GitHub refused): what gh calls not being authenticated.
type AuthError struct{ Msg string }

func (e *AuthError) Error() string { return e.Msg }

func isAuth(err error) bool {
	var ae *AuthError
	var api *ghapi.Error
	return errors.As(err, &ae) || errors.As(err, &api) && api.Status == 401
}

// ghLoginHint is gh's own advice to a person who is not logged in.
const ghLoginHint = "To get started with GitHub CLI, please run:  gh auth login\n" +
	"Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token."

// noToken says what to do about an empty token input: in a workflow, a secret that is not set; outside
// GitHub Actions, a person running the action by hand without a gh login.
func (r *runner) noToken() error {
	if r.getenv("GITHUB_ACTIONS") != "true" {
		return &AuthError{Msg: "no GitHub token: INPUT_TOKEN is empty. Outside GitHub Actions, run the action with your gh login's token: " +
			"INPUT_TOKEN=$(gh auth token) gh-ralph action\n" + ghLoginHint}
	}
	return &AuthError{Msg: "the token input is empty: the secret it names is probably not set in this repository (Settings → Secrets and variables → Actions). " +
		"Leave token: out to use the Actions token, or set the secret (gh secret set NAME)"}
}

type runner struct {
	a       *githubactions.Action
	env     Env
	results []engine.Result
	issues  []int
	command Command
	dryRun  bool
	links   *ghapi.Client
	// ciNotice says that a pull request this run opened starts no CI (see noteCI).
	ciNotice string
}

// noteCI says, when this run opened a pull request with the Actions token (as the workflow file that
// started it passes), that GitHub starts no pull_request workflows for it, so the repository's CI does not
// run on it, and what to do. It costs no request: the workflow file is in the checkout.
func (r *runner) noteCI() {
	var opened []string
	for _, res := range r.results {
		if res.Step == workflow.PR && res.State == workflow.InReview && res.PRURL != "" && !r.dryRun {
			opened = append(opened, res.PRURL)
		}
	}
	if len(opened) == 0 {
		return
	}
	if wf := r.workflowFile(); wf == nil || !wf.ActionsToken() {
		return
	}
	r.ciNotice = fmt.Sprintf("%s was opened with the Actions token, so GitHub starts no pull_request workflows for it: "+
		"your CI does not run on it until someone pushes to its branch. To have CI run on ralph's pull requests, give ralph "+
		"a GitHub App's token (README: CI on ralph's pull requests).", strings.Join(opened, ", "))
	r.a.Noticef("%s", r.ciNotice)
}

func (r *runner) getenv(k string) string { return r.env.Getenv(k) }

func (r *runner) run(ctx context.Context) error {
	a := r.a
	token := strings.TrimSpace(a.GetInput("token"))
	if token == "" {
		return r.noToken()
	}
	a.AddMask(token)

	owner, repo, ok := strings.Cut(r.getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name: is this running in GitHub Actions?", r.getenv("GITHUB_REPOSITORY"))
	}
	workspace := r.getenv("GITHUB_WORKSPACE")
	if workspace == "" {
		return errors.New("GITHUB_WORKSPACE is not set: check out the repository first (actions/checkout with fetch-depth: 0)")
	}
	dry, err := parseBool(a.GetInput("dry_run"))
	if err != nil {
		return fmt.Errorf("input dry_run: %w", err)
	}
	r.dryRun = dry

	cfgRel := a.GetInput("config")
	if cfgRel == "" {
		cfgRel = config.DefaultPath
	}
	cfg, err := loadConfig(workspace, cfgRel)
	if err != nil {
		return err
	}

	trig, err := r.trigger(cfg)
	if err != nil {
		return err
	}
	r.command = trig.Command
	if trig.Command == CmdNone {
		a.Infof("nothing to do: %s", trig.Why)
		r.summary("nothing to do: "+trig.Why, nil)
		return nil
	}

	transport, err := ghapi.DefaultTransport(r.getenv)
	if err != nil {
		return err
	}
	gh, err := ghapi.New(ghapi.Options{Endpoints: ghapi.EndpointsFromEnv(r.getenv), Token: token, Owner: owner, Repo: repo, Transport: transport})
	if err != nil {
		return err
	}
	r.links = gh
	store, sb, closeStore, err := r.workspaces(ctx, cfg, workspace, token)
	if err != nil {
		return err
	}
	defer closeStore()
	runner, agentErr := agent.New(cfg.Agent)
	author := git.Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"}
	runID, _ := strconv.ParseInt(r.getenv("GITHUB_RUN_ID"), 10, 64)
	info := engine.RunInfo{Label: "ralph"}
	if runID != 0 {
		info = engine.RunInfo{URL: gh.RunURL(runID), Label: fmt.Sprintf("Actions run %d", runID)}
	}
	eng := &engine.Engine{
		GitHub:     gh,
		Workspaces: store,
		Sandbox:    sb,
		Agent:      runner,
		AgentErr:   agentErr,
		Config:     cfg,
		Prompts:    prompts.New(workspace),
		Lock:       enginelock.Locker{Locker: r.locker(gh, lock.GitRefs{Repo: store.Repo(), Author: author}, cfg, runID)},
		Auth:       engine.PermissionAuthorizer{Permission: gh.Permission, AllowedBots: cfg.AllowedBots},
		Identity:   engine.OnceIdentity(gh.Viewer),
		Log:        actionLog{a: a, out: r.env.Stdout},
		Run:        info,
		Author:     author,
		AgentEnv:   r.env.Environ,
		Secrets:    []string{token},
		DryRun:     dry,
		// The model gateway reaches the vendor through the runner's proxies and CA bundle; the day's
		// spending is shared through ralph's repository (refs/ralph/budget/day).
		ModelTransport: transport,
		Ledger:         &ledger.Ledger{Repo: store.Repo(), Author: author},
	}

	if err := r.attachBoard(eng, cfg, gh.Endpoints(), transport); err != nil { // project.go
		return err
	}

	if at := r.getenv("RALPH_TEST_CRASH_AT"); at != "" {
		// A test seam: the end-to-end tests stop the process at one named point between two writes, to
		// prove that the next run repairs whatever it left.
		eng.Checkpoint = func(name string) {
			if name == at {
				fmt.Fprintf(r.env.Stdout, "ralph: stopping at %s (RALPH_TEST_CRASH_AT)\n", name)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}

	// Every command that may run a step checks, before it touches an issue, that the agent can run.
	switch trig.Command {
	case CmdEnroll, CmdAdvance, CmdApprove, CmdReject, CmdRetry, CmdSweep:
		if dry || trig.Command == CmdSweep && cfg.Sweep.Matrix {
			break
		}
		if err := r.preflight(ctx, cfg, sb); err != nil {
			return err
		}
	}
	switch trig.Command {
	case CmdSweep:
		return r.sweep(ctx, eng, gh, cfg)
	case CmdHelp:
		n := trig.Issues[0]
		if dry {
			return nil
		}
		_, err := gh.CreateComment(ctx, n, HelpText(trig.Reason))
		return err
	}
	if len(trig.Issues) == 0 {
		return fmt.Errorf("command %s needs an issue: set the action's issue input (or the workflow_dispatch input issue)", trig.Command)
	}
	var errs []error
	for _, n := range trig.Issues {
		errs = append(errs, r.oneAndChain(ctx, eng, gh, cfg, trig, n)...)
	}
	r.noteCI()
	r.outputs()
	r.summary("", errors.Join(errs...))
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			a.Errorf("%s", e)
		}
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// oneAndChain runs the trigger's command on issue n, then dispatches the runs it calls for.
func (r *runner) oneAndChain(ctx context.Context, eng *engine.Engine, gh *ghapi.Client, cfg config.Config, trig Trigger, n int) []error {
	var errs []error
	res, err := r.one(ctx, eng, trig, n)
	r.results = append(r.results, res)
	if err != nil {
		errs = append(errs, err)
	}
	// A failed step that will be retried chains on too: the retry is the next run. So do the issues this
	// step made ready: sub-issues a split created or unblocked, and the parent of a sub-issue that moved.
	if cfg.Chain && !r.dryRun {
		next := res.Dispatch
		if res.Continue {
			next = append([]int{n}, next...)
		}
		for _, m := range next {
			if derr := r.dispatch(ctx, gh, m); derr != nil {
				errs = append(errs, derr)
			}
		}
	}
	return errs
}

// one runs the trigger's command on issue n.
func (r *runner) one(ctx context.Context, eng *engine.Engine, trig Trigger, n int) (engine.Result, error) {
	var (
		res engine.Result
		err error
	)
	switch trig.Command {
	case CmdEnroll:
		res, err = eng.Enroll(ctx, n, trig.Actor)
	case CmdAdvance:
		res, err = eng.Advance(ctx, n)
	case CmdMerge:
		res, err = eng.PullClosed(ctx, n, trig.Pull)
	case CmdApprove, CmdRetry, CmdReject:
		switch trig.Command {
		case CmdApprove:
			res, err = eng.Approve(ctx, n, trig.Actor)
		case CmdRetry:
			res, err = eng.Retry(ctx, n, trig.Actor)
		default:
			res, err = eng.Reject(ctx, n, trig.Actor, trig.Reason)
		}
		// The person's action is bookkeeping; this run then does the next step, as enrollment does.
		if err == nil && res.Continue && !r.dryRun {
			res, err = eng.Advance(ctx, n)
		}
	case CmdStatus:
		_, err = eng.Status(ctx, n, true)
		res = engine.Result{Issue: n}
	default:
		return engine.Result{Issue: n}, fmt.Errorf("unknown command %q: use advance, sweep, approve, reject, retry or status", trig.Command)
	}
	var refused *engine.RefusedError
	if errors.As(err, &refused) {
		r.a.Noticef("%s; nothing was done", refused)
		return engine.Result{Issue: n, Message: refused.Error()}, nil
	}
	if errors.Is(err, engine.ErrNotEnrolled) {
		r.a.Infof("#%d: %v", n, err)
		return engine.Result{Issue: n, Message: err.Error()}, nil
	}
	if err != nil {
		return res, fmt.Errorf("#%d: %w", n, err)
	}
	if res.Message != "" {
		r.a.Infof("%s", res.Message)
	}
	return res, nil
}

// trigger decides what to do from the inputs (which win) and the event.
func (r *runner) trigger(cfg config.Config) (Trigger, error) {
	name := r.getenv("GITHUB_EVENT_NAME")
	var payload []byte
	if p := r.getenv("GITHUB_EVENT_PATH"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return Trigger{}, fmt.Errorf("reading the event payload: %w", err)
		}
		payload = b
	}
	t, err := ParseEvent(name, payload, cfg.BranchPrefix)
	if err != nil {
		return t, err
	}
	if in := strings.TrimSpace(r.a.GetInput("command")); in != "" {
		switch c := Command(in); c {
		case CmdAdvance, CmdSweep, CmdApprove, CmdReject, CmdRetry, CmdStatus:
			t.Command = c
		default:
			return t, fmt.Errorf("input command %q is not one of advance, sweep, approve, reject, retry, status", in)
		}
		if t.Actor == "" {
			t.Actor = r.getenv("GITHUB_ACTOR")
		}
	}
	if in := strings.TrimSpace(r.a.GetInput("issue")); in != "" {
		n, err := inputInt(in)
		if err != nil {
			return t, fmt.Errorf("input issue: %w", err)
		}
		t.Issues = []int{n}
		if t.Command == CmdNone {
			t.Command = CmdAdvance
		}
	}
	return t, nil
}

// locker is the per-issue lock on GitHub, held in the name of this Actions run.
func (r *runner) locker(gh *ghapi.Client, refs lock.Refs, cfg config.Config, runID int64) *lock.Locker {
	holder := lock.Holder{Kind: "actions", RunID: runID, RunURL: gh.RunURL(runID)}
	holder.Attempt, _ = strconv.Atoi(r.getenv("GITHUB_RUN_ATTEMPT"))
	if runID == 0 {
		host, _ := os.Hostname()
		holder = lock.Holder{Kind: "local", Host: host, PID: os.Getpid(), User: r.getenv("USER")}
	}
	return &lock.Locker{Refs: refs, Runs: gh, Holder: holder, Lease: cfg.LockLease, Warnf: r.a.Warningf}
}

// dispatch starts this workflow again for issue n: events caused by the Actions token start no runs,
// workflow_dispatch excepted.
func (r *runner) dispatch(ctx context.Context, gh *ghapi.Client, n int) error {
	ref := r.getenv("GITHUB_WORKFLOW_REF")
	file, gitRef, ok := strings.Cut(ref, "@")
	if !ok || file == "" {
		r.a.Warningf("GITHUB_WORKFLOW_REF is not set; not dispatching the next step of #%d (chain: true needs it)", n)
		return nil
	}
	wf := path.Base(file)
	// The dispatch API takes a branch or tag name.
	gitRef = strings.TrimPrefix(strings.TrimPrefix(gitRef, "refs/heads/"), "refs/tags/")
	run, err := gh.DispatchWorkflow(ctx, wf, gitRef, map[string]string{"issue": strconv.Itoa(n)})
	if err != nil {
		return fmt.Errorf("dispatching %s for #%d: %w (the workflow needs `on: workflow_dispatch` with an `issue` input, and `actions: write` permission)", wf, n, err)
	}
	if run.HTMLURL != "" {
		r.a.Infof("dispatched %s on %s for the next step of #%d: %s", wf, gitRef, n, run.HTMLURL)
		return nil
	}
	r.a.Infof("dispatched %s on %s for the next step of #%d", wf, gitRef, n)
	return nil
}

func (r *runner) outputs() {
	if r.issues != nil {
		b, _ := json.Marshal(r.issues)
		r.setOutput("issues", string(b))
	}
	if len(r.results) == 0 {
		return
	}
	res := r.results[len(r.results)-1]
	r.setOutput("issue", strconv.Itoa(res.Issue))
	r.setOutput("step", string(res.Step))
	r.setOutput("from_state", string(res.From))
	r.setOutput("state", string(res.State))
	r.setOutput("pr_url", res.PRURL)
	r.setOutput("paused", strconv.FormatBool(res.Paused))
	u := runUsage(r.results)
	r.setOutput("cost", strconv.FormatFloat(u.CostUSD, 'f', -1, 64))
	r.setOutput("tokens", strconv.Itoa(u.InputTokens+u.OutputTokens))
}

// setOutput sets an output of the step; outside GitHub Actions (no GITHUB_OUTPUT file to write) it prints
// name=value on standard output instead.
func (r *runner) setOutput(name, value string) {
	if r.getenv("GITHUB_OUTPUT") == "" {
		fmt.Fprintf(r.env.Stdout, "%s=%s\n", name, value)
		return
	}
	r.a.SetOutput(name, value)
}

func (r *runner) summary(note string, err error) {
	if r.getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	var b strings.Builder
	b.WriteString("## ralph\n\n")
	if r.dryRun {
		b.WriteString("**Dry run**: nothing was written.\n\n")
	}
	if note != "" {
		fmt.Fprintf(&b, "%s\n\n", note)
	}
	if len(r.results) > 0 {
		b.WriteString("| issue | step | from | to | result |\n|---|---|---|---|---|\n")
		for _, res := range r.results {
			link := fmt.Sprintf("#%d", res.Issue)
			if r.links != nil {
				link = fmt.Sprintf("[#%d](%s/%s/%s/issues/%d)", res.Issue, r.links.Endpoints().Server, r.links.Owner(), r.links.Repo(), res.Issue)
			}
			outcome := strings.ReplaceAll(res.Message, "|", "\\|")
			if res.PRURL != "" {
				outcome += fmt.Sprintf(" — [pull request](%s)", res.PRURL)
			}
			if res.Paused {
				outcome += " — **waiting for a person**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", link, orDash(string(res.Step)), title(res.From), title(res.State), outcome)
		}
		b.WriteString("\n")
	}
	b.WriteString(usageSummary(r.results))
	if r.ciNotice != "" {
		fmt.Fprintf(&b, "> [!NOTE]\n> %s\n\n", r.ciNotice)
	}
	if len(r.issues) > 0 {
		fmt.Fprintf(&b, "Issues to advance: %v\n\n", r.issues)
	}
	if err != nil {
		fmt.Fprintf(&b, "> [!CAUTION]\n> %s\n", strings.ReplaceAll(err.Error(), "\n", "\n> "))
	}
	r.a.AddStepSummary(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func title(s workflow.State) string {
	if s == "" {
		return "—"
	}
	return s.Title()
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "0", "no":
		return false, nil
	case "true", "1", "yes":
		return true, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}

// loadConfig reads the config, naming it relative to the workspace in errors (as annotations need).
func loadConfig(workspace, rel string) (config.Config, error) {
	if filepath.IsAbs(rel) {
		if r, err := filepath.Rel(workspace, rel); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	b, err := os.ReadFile(filepath.Join(workspace, rel))
	if errors.Is(err, os.ErrNotExist) {
		if rel != config.DefaultPath {
			return config.Config{}, fmt.Errorf("config file %s does not exist in the checkout", rel)
		}
		return config.Default(), nil
	}
	if err != nil {
		return config.Config{}, fmt.Errorf("reading %s: %w", rel, err)
	}
	return config.Parse(filepath.ToSlash(rel), b)
}

// actionLog is the engine's logger in the Actions log.
type actionLog struct {
	a   *githubactions.Action
	out io.Writer
}

func (l actionLog) Infof(format string, args ...any) { l.a.Infof(format, args...) }
func (l actionLog) Warnf(format string, args ...any) { l.a.Warningf(format, args...) }

// Untrusted fences the output in a group with ::stop-commands:: and a token of its own, fresh each time,
// so that no workflow command the agent prints (::set-output, ::add-mask, another ::stop-commands::) takes
// effect; the token is printed only by ralph, and the agent cannot read ralph's output.
func (l actionLog) Untrusted(title string) (io.Writer, func()) {
	l.a.Group(title)
	token := randomToken()
	fmt.Fprintf(l.out, "::stop-commands::%s\n", token)
	return l.out, func() {
		// On a line of its own, whatever the agent's last line was.
		fmt.Fprintf(l.out, "\n::%s::\n", token)
		l.a.EndGroup()
	}
}

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
