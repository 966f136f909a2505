// Package action is ralph's GitHub Actions door: it reads the inputs and the event, builds the engine, runs
// the command, and reports through outputs, the step summary, log groups and annotations.
package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/lock"
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

// ExitStatus is the status main exits with; the failure is already reported.
func (e *ExitError) ExitStatus() int { return e.Code }

// Run is the action's entry point.
func Run(ctx context.Context, env Env) error {
	ev := ReadEnvironment(env.Getenv)
	a := newReporter(ev.InActions, env.Getenv, env.Stdout)
	r := &runner{a: a, env: env, ev: ev}
	err := r.run(ctx)
	r.unseal()
	if err != nil {
		var ex *ExitError
		var se *doctor.StartError
		switch problems := config.Problems(err); {
		case errors.As(err, &ex), errors.As(err, &se): // already reported, one problem an annotation
		case len(problems) > 0: // each at its place in the file
			for _, p := range problems {
				a.ErrorAt(p.File, p.Line, p.Column, "ralph: invalid config", p.Error())
			}
		default:
			a.Errorf("%s", err)
		}
		if !r.summarized {
			r.summary("failed", err)
		}
		code := 1
		if ghapi.IsAuth(err) {
			code = ghapi.ExitAuth
		}
		return &ExitError{Code: code, Err: err}
	}
	return nil
}

// ghLoginHint is gh's own advice to a person who is not logged in.
const ghLoginHint = "To get started with GitHub CLI, please run:  gh auth login\n" +
	"Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token."

// noToken says what to do about an empty token input: in a workflow, a secret that is not set; outside
// GitHub Actions, a person running the action by hand without a gh login.
func (r *runner) noToken() error {
	if !r.ev.InActions {
		return &ghapi.AuthError{Err: errors.New("no GitHub token: INPUT_TOKEN is empty. Outside GitHub Actions, run the action with your gh login's token: " +
			"INPUT_TOKEN=$(gh auth token) gh-ralph action"), Hint: ghLoginHint}
	}
	return &ghapi.AuthError{Err: errors.New("the token input is empty: the secret it names is probably not set in this repository (Settings → Secrets and variables → Actions). " +
		"Leave token: out to use the Actions token, or set the secret (gh secret set NAME)")}
}

type runner struct {
	a       reporter
	env     Env
	ev      Environment
	results []engine.Result
	issues  []int
	dryRun  bool
	links   *ghapi.Client
	// ciNotice says that a pull request this run opened starts no CI (see noteCI).
	ciNotice string
	// defaultBranch is the repository's default branch as the event's payload says (Trigger.DefaultBranch).
	defaultBranch string
	// summarized: the step summary is written; a run writes it once.
	summarized bool
	// sealed are the directories closed to the agent, given their modes back when the run ends.
	sealed []sealedDir
	// chainFile is the file name of the workflow the chain dispatches (chainWorkflow); "": the one that
	// started this run.
	chainFile string
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

func (r *runner) run(ctx context.Context) error {
	a, ev := r.a, r.ev
	token := ev.Inputs.Token
	if token == "" {
		return r.noToken()
	}
	a.AddMask(token)

	owner, repo, ok := strings.Cut(ev.Repository, "/")
	if !ok || owner == "" || repo == "" {
		return fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name: is this running in GitHub Actions?", ev.Repository)
	}
	if ev.Workspace == "" {
		return errors.New("GITHUB_WORKSPACE is not set: check out the repository first (actions/checkout with fetch-depth: 0)")
	}
	dry, err := parseBool(ev.Inputs.DryRun)
	if err != nil {
		return fmt.Errorf("input dry_run: %w", err)
	}
	r.dryRun = dry

	cfg, err := compose.LoadConfig(ev.Workspace, ev.Inputs.Config)
	if err != nil {
		return err
	}

	trig, err := r.trigger(cfg)
	if err != nil {
		return err
	}
	r.defaultBranch = trig.DefaultBranch
	r.chainFile = cfg.Workflow
	if wf := r.chainWorkflow(cfg); wf != nil && wf.Chain != nil {
		r.chainFile = wf.Chain.File()
	}
	if trig.Action == "" && trig.Own == "" {
		a.Infof("nothing to do: %s", trig.Why)
		r.summary("nothing to do: "+trig.Why, nil)
		return nil
	}

	transport, err := ghapi.DefaultTransport(r.env.Getenv)
	if err != nil {
		return err
	}
	opts := ghapi.Options{Endpoints: ev.Endpoints, Token: token, Owner: owner, Repo: repo, Transport: transport}
	if ev.LimitWait > 0 {
		opts.Retry = ghapi.DefaultRetry
		opts.Retry.Limits = ev.LimitWait
	}
	gh, err := ghapi.New(opts)
	if err != nil {
		return err
	}
	r.links = gh
	if ev.Inputs.ProjectToken != "" {
		a.AddMask(ev.Inputs.ProjectToken)
	}
	// A run whose first act on GitHub is a git push (its lock) asks GitHub about the token first: a token
	// GitHub refuses is then said as bad credentials (exit 4), not as git's "could not read Username". The
	// others start with a request of the API (a person's permission, the list of a sweep).
	switch trig.Action {
	case engine.ActEnroll, engine.ActAdvance, engine.ActMerge, engine.ActFinish, engine.ActFix:
		if err := gh.CheckToken(ctx); err != nil {
			return fmt.Errorf("checking the token: %w", err)
		}
	}
	eng, cleanup, err := compose.Build(ctx, r.door(gh, cfg, transport))
	if err != nil {
		return err
	}
	defer cleanup()
	// With chain: false no run follows this one's step: only a sweep takes the issue on, and no sweep takes
	// one whose ralph:build counts for nobody, so the status comment the step writes must say it waits for
	// a writer, not that ralph goes on by itself. (A sweep takes only issues whose label counts.)
	if !cfg.Chain && trig.Own != OwnSweep {
		eng.Labeler = func(ctx context.Context, is ghapi.Issue) (bool, string, error) {
			return engine.Unowned(ctx, gh, eng.Auth, is, nil)
		}
	}
	if cfg.Project != nil && ev.Inputs.ProjectToken == "" {
		a.Warningf("project: is set in the config, but the project_token input is empty, so the board is not updated: " +
			"the Actions token (GITHUB_TOKEN) cannot reach Projects. Store a token that can (a classic token with the project scope, " +
			"or a fine-grained token or GitHub App with Projects read and write) as a secret and pass it: " +
			"`project_token: ${{ secrets.RALPH_PROJECT_TOKEN }}`")
	}

	sb := eng.Sandbox
	// Every command that may run a step checks, before it touches an issue, that the agent can run.
	if runsStep(trig) && !dry && !(trig.Own == OwnSweep && cfg.Sweep.Matrix) {
		boundary, err := r.preflight(ctx, cfg, sb)
		if err != nil {
			return err
		}
		eng.Agent = compose.Announced(eng.Agent, r.a.Infof, boundary)
	}
	switch trig.Own {
	case OwnSweep:
		return r.sweep(ctx, eng, gh, cfg)
	case OwnHelp:
		n := trig.Issues[0]
		// The word is the commenter's: it is quoted inert.
		said := strings.TrimSpace("/ralph " + trig.Reason)
		note := fmt.Sprintf("The comment's %s is not a ralph command: replied on #%d with the commands.", engine.Inert(said), n)
		if dry {
			r.summary(fmt.Sprintf("The comment's %s is not a ralph command: would reply on #%d with the commands.", engine.Inert(said), n), nil)
			return nil
		}
		if _, err := gh.CreateComment(ctx, n, HelpText(trig.Reason)); err != nil {
			return err
		}
		r.summary(note, nil)
		return nil
	}
	if trig.Action == engine.ActFix && len(trig.Issues) == 0 && trig.Fix != nil && trig.Fix.Pull != 0 {
		why, err := resolveFixPull(ctx, gh, cfg.BranchPrefix, &trig)
		if err != nil {
			return err
		}
		if why != "" {
			a.Infof("nothing to do: %s", why)
			r.summary("nothing to do: "+why, nil)
			return nil
		}
	}
	if len(trig.Issues) == 0 {
		return fmt.Errorf("command %s needs an issue: set the action's issue input (or the workflow_dispatch input issue)", trig.Action)
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
	chain := cfg.Chain && !r.dryRun
	res, err := r.one(ctx, eng, trig, n, chain)
	r.results = append(r.results, res)
	if err != nil {
		errs = append(errs, err)
	}
	if res.Unfinished != nil {
		errs = append(errs, res.Unfinished)
	}
	// A failed step that will be retried chains on too: the retry is the next run. So do the issues this
	// step made ready: sub-issues a split created or unblocked, and the parent of a sub-issue that moved.
	// A step GitHub failed for a while is finished by a run of its own (engine.Handle counts it).
	if chain {
		next := res.Dispatch
		if res.Continue || res.Finish {
			next = append([]int{n}, next...)
		}
		for _, m := range next {
			var derr error
			finishing := m == n && res.Finish
			if finishing {
				derr = r.dispatchCommand(ctx, gh, m, engine.ActFinish)
			} else {
				derr = r.dispatch(ctx, gh, m)
			}
			if derr != nil {
				errs = append(errs, derr)
				// The dispatch is lost (GitHub refused it past ralph's wait, or failed it): the issue's
				// record says so, and the next sweep takes it first.
				var step workflow.Event
				if finishing {
					step = res.Step
				}
				errs = append(errs, r.lost(ctx, eng, m, step, finishing)...)
			}
		}
	}
	return errs
}

// runsStep says whether t may run a step of the agent's: a sweep, and every request but a merge's and
// status.
func runsStep(t Trigger) bool {
	switch t.Action {
	case engine.ActEnroll, engine.ActAdvance, engine.ActApprove, engine.ActReject, engine.ActRetry, engine.ActFix, engine.ActFinish:
		return true
	}
	return t.Own == OwnSweep
}

// lost records that issue n's run (to take step, or to finish it) was not started, for the next sweep
// (engine.Lost), and says so.
func (r *runner) lost(ctx context.Context, eng *engine.Engine, n int, step workflow.Event, finish bool) []error {
	waits, err := eng.Lost(ctx, n, step, finish)
	if err != nil {
		return []error{fmt.Errorf("#%d: its run was not started, and recording that it waits for the next sweep failed: %w", n, err)}
	}
	if waits {
		r.a.Warningf("#%d: its run was not started; its record says so, and the next sweep takes it first", n)
	}
	return nil
}

// one asks the engine to do the trigger's command on issue n (engine.Handle) and says what it did.
// finishable: a step GitHub failed for a while is finished by a run this one dispatches.
func (r *runner) one(ctx context.Context, eng *engine.Engine, trig Trigger, n int, finishable bool) (engine.Result, error) {
	q := engine.Request{Action: trig.Action, Issue: n, Actor: trig.Actor, Reason: trig.Reason, Pull: trig.Pull, Finishable: finishable}
	if f := trig.Fix; f != nil {
		q.Fix = &engine.FixRequest{Cause: f.Cause, Pull: f.Pull, HeadSHA: f.HeadSHA}
	}
	res, err := eng.Handle(ctx, q)
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

// door is what the Action gives the engine: the Actions token (which also pushes), the bot's signature,
// this run as the lock's holder (a local holder when not in an Actions run), the project_token input,
// RALPH_TEST_CRASH_AT's checkpoint; the clock is the system's.
func (r *runner) door(gh *ghapi.Client, cfg config.Config, transport http.RoundTripper) compose.Door {
	ev := r.ev
	d := compose.Door{
		GitHub: gh, Token: ev.Inputs.Token, Config: cfg,
		Checkout: ev.Workspace, PushAuth: git.Auth{Token: ev.Inputs.Token}, Writable: ev.Writable, ReadOnly: ev.ReadOnly,
		Log:     actionLog{a: r.a, out: r.env.Stdout},
		Holder:  lock.Holder{Kind: "actions", RunID: ev.RunID, Attempt: ev.RunAttempt, RunURL: gh.RunURL(ev.RunID)},
		Origin:  engine.Origin{URL: gh.RunURL(ev.RunID), Label: fmt.Sprintf("Actions run %d", ev.RunID)},
		Author:  git.Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"},
		Environ: r.env.Environ, Transport: transport, ProjectToken: ev.Inputs.ProjectToken, DryRun: r.dryRun,
		// GitHub makes ralph's commits through its API, and signs them (on GHES, once its admin has turned
		// on web commit signing).
		SignedCommits: true,
		Signing:       engine.Signing{Signed: true, How: "made by GitHub through its API, which signs them"},
	}
	if ev.RunID == 0 {
		d.Holder = lock.LocalHolder(ev.User)
		d.Origin = engine.Origin{Label: "ralph"}
	}
	if at := ev.CrashAt; at != "" {
		// A test seam: the end-to-end tests stop the process at one named point between two writes, to
		// prove that the next run repairs whatever it left.
		d.Checkpoint = func(name string) {
			if name == at {
				fmt.Fprintf(r.env.Stdout, "ralph: stopping at %s (RALPH_TEST_CRASH_AT)\n", name)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	return d
}

// trigger decides what to do from the inputs (which win) and the event.
func (r *runner) trigger(cfg config.Config) (Trigger, error) {
	name := r.ev.EventName
	var payload []byte
	if p := r.ev.EventPath; p != "" {
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
	if in := r.ev.Inputs.Command; in != "" {
		var err error
		if t.Action, t.Own, err = inputVerb(in); err != nil {
			return t, fmt.Errorf("input %w", err)
		}
		if t.Action == engine.ActFix && t.Fix == nil {
			t.Fix = &FixRequest{Cause: FixComment} // a person's request, as `/ralph fix` is
		}
		if t.Actor == "" {
			t.Actor = r.ev.Actor
		}
	}
	if in := r.ev.Inputs.Issue; in != "" {
		n, err := inputInt(in)
		if err != nil {
			return t, fmt.Errorf("input issue: %w", err)
		}
		t.Issues = []int{n}
		if t.Action == "" && t.Own == "" {
			t.Action = engine.ActAdvance
		}
	}
	return t, nil
}

// dispatch starts the workflow that advances issues (this one, or the one the chain dispatches, see
// chainWorkflow) for issue n: events caused by the Actions token start no runs, workflow_dispatch excepted.
func (r *runner) dispatch(ctx context.Context, gh *ghapi.Client, n int) error {
	return r.dispatchCommand(ctx, gh, n, "")
}

// dispatchCommand dispatches this workflow for issue n with the command input cmd ("": none, the
// workflow's default, advance). A workflow whose workflow_dispatch has no command input is dispatched
// without it, with a warning of what is lost.
func (r *runner) dispatchCommand(ctx context.Context, gh *ghapi.Client, n int, cmd engine.Action) error {
	file, gitRef, ok := strings.Cut(r.ev.WorkflowRef, "@")
	if !ok || file == "" {
		r.a.Warningf("GITHUB_WORKFLOW_REF is not set; not dispatching the next step of #%d (chain: true needs it)", n)
		return nil
	}
	wf := path.Base(file)
	if r.chainFile != "" {
		// A sweep's runs (or any other workflow's) carry issues forward through the workflow that
		// advances them, whose workflow_dispatch has the issue input this one may lack.
		wf = r.chainFile
	}
	// The dispatch API takes a branch or tag name. A run of a pull request's event (a review, a merge) runs
	// the workflow of the pull request's merge ref (refs/pull/N/merge), which is neither: the next step runs
	// on the default branch, as the issue's other events do.
	gitRef = strings.TrimPrefix(strings.TrimPrefix(gitRef, "refs/heads/"), "refs/tags/")
	if strings.HasPrefix(gitRef, "refs/") {
		branch, err := r.dispatchBranch(ctx, gh)
		if err != nil {
			return fmt.Errorf("dispatching %s for #%d: this run's workflow ran on %s, which is no branch, and the default branch is not known: %w", wf, n, gitRef, err)
		}
		gitRef = branch
	}
	inputs := map[string]string{"issue": strconv.Itoa(n)}
	if cmd != "" {
		inputs["command"] = string(cmd)
	}
	run, err := gh.DispatchWorkflow(ctx, wf, gitRef, inputs)
	var ge *ghapi.Error
	if cmd != "" && errors.As(err, &ge) && ge.Status == http.StatusUnprocessableEntity && strings.Contains(ge.Message, "nexpected input") {
		r.a.Warningf("%s has no workflow_dispatch input command, so the run that finishes #%d only advances it: what the person asked is not done again (add the input, as gh ralph init writes it)", wf, n)
		delete(inputs, "command")
		run, err = gh.DispatchWorkflow(ctx, wf, gitRef, inputs)
	}
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

// dispatchBranch is the repository's default branch: as the event's payload says, or else as GitHub does
// (one request).
func (r *runner) dispatchBranch(ctx context.Context, gh *ghapi.Client) (string, error) {
	if r.defaultBranch != "" {
		return r.defaultBranch, nil
	}
	repo, err := gh.Repository(ctx)
	if err != nil {
		return "", err
	}
	if repo.DefaultBranch == "" {
		return "", errors.New("GitHub names no default branch")
	}
	r.defaultBranch = repo.DefaultBranch
	return repo.DefaultBranch, nil
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
	if r.ev.Output == "" {
		fmt.Fprintf(r.env.Stdout, "%s=%s\n", name, value)
		return
	}
	r.a.SetOutput(name, value)
}

func (r *runner) summary(note string, err error) {
	r.summarized = true
	if r.ev.StepSummary == "" {
		return
	}
	r.a.AddStepSummary(r.summaryMarkdown(note, err))
}

// The step summary's bounds: GitHub takes at most 1 MiB of summary per step and drops a larger one whole.
// A message may quote others' text (a refused path's name, a phase's title): each is cut, and the whole is
// cut last, so a summary of any run fits.
const (
	summaryLimit   = 1 << 20
	summaryMessage = 2000 // the characters of one issue's outcome
	summaryError   = 4000 // the characters of the run's error
	summaryMargin  = 1024 // room for the note of a cut
)

// summaryMarkdown is the step summary of the run: what each issue's step did, what it cost, what it was
// refused, and the run's error, within summaryLimit bytes.
func (r *runner) summaryMarkdown(note string, err error) string {
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
			outcome := strings.ReplaceAll(quoted(cutRunes(res.Message, summaryMessage)), "|", "\\|")
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
	b.WriteString(refusedSummary(r.results))
	b.WriteString(unverifiedSummary(r.results))
	if r.ciNotice != "" {
		fmt.Fprintf(&b, "> [!NOTE]\n> %s\n\n", r.ciNotice)
	}
	if len(r.issues) > 0 {
		fmt.Fprintf(&b, "Issues to advance: %v\n\n", r.issues)
	}
	if err != nil {
		fmt.Fprintf(&b, "> [!CAUTION]\n> %s\n", quoted(cutRunes(err.Error(), summaryError)))
	}
	md := b.String()
	if len(md) > summaryLimit {
		cut := summaryLimit - summaryMargin
		for cut > 0 && !utf8.RuneStart(md[cut]) {
			cut--
		}
		md = md[:cut] + fmt.Sprintf("\n\n… (the summary is cut here: %d bytes more, past GitHub's 1 MiB; the run's log has every line)\n", len(md)-cut)
	}
	return md
}

// cutRunes is s, at most n runes of it, saying how many more there were.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + fmt.Sprintf(" … (cut: %d characters more)", utf8.RuneCountInString(s[i:]))
}

// quoted writes a message of ralph's that may hold others' text (a phase's title) in a code span: GitHub
// makes no reference, mention or link of what is in one, so ralph's own URLs, paths, numbers and logins
// stay as they are (a copied URL works), and no one else's text acts. Control characters are shown as
// internal/inert shows them; a backtick, which would end the span, becomes a quote, and "<" its
// full-width twin, so that no HTML comment (one of ralph's markers, to a reader) is in the text at all.
func quoted(s string) string {
	s = strings.Join(strings.Fields(inert.String(s)), " ")
	if s == "" {
		return ""
	}
	return "`" + strings.NewReplacer("`", "'", "<", "\uFF1C").Replace(s) + "`"
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
