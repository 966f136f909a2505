package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// step runs the one step the issue's state calls for.
func (e *Engine) step(ctx context.Context, ic *issue) (Result, error) {
	from := ic.state
	res := Result{Issue: ic.n, From: from, State: from}
	if ic.gh.State == "closed" && from.Kind() != workflow.Terminal && from != workflow.InReview {
		res.Message = fmt.Sprintf("#%d is closed; nothing to do (reopen it to go on)", ic.n)
		return res, nil
	}
	ev, ok := workflow.StepFor(from)
	if !ok {
		res.Paused = from == workflow.HumanNeeded
		res.Message = e.waitingMessage(ic)
		return res, nil
	}
	if ev == workflow.Implement {
		if _, left := ic.rec.phasesLeft(); !left {
			ev = workflow.PR
		}
	}
	if len(ic.rec.Children) > 0 && (ev == workflow.Implement || ev == workflow.PR || ev == workflow.Merge) {
		ev = workflow.Children // a parent is not implemented itself: it follows its sub-issues
	}
	if blocked, err := e.blocked(ctx, ic); err != nil || blocked != "" {
		res.Message = blocked
		return res, err
	}
	if ev == workflow.Review && e.Config.Review == config.ReviewInteractive {
		res.Paused = true
		res.Message = fmt.Sprintf("#%d waits for a person to review the plan: `/ralph approve` or `/ralph reject <why>`", ic.n)
		return res, nil
	}
	res.Step = ev
	if e.AgentErr != nil && needsAgent(ev, e.Config) {
		return res, fmt.Errorf("cannot run %s on #%d: %w", ev, ic.n, e.AgentErr)
	}
	if e.DryRun {
		res.Message = fmt.Sprintf("would run %s on #%d (%s)", ev, ic.n, from.Title())
		return res, nil
	}
	e.fillRecord(ic)
	if ic.rec.Base == "" {
		base, err := e.baseBranch(ctx)
		if err != nil {
			return res, err
		}
		ic.rec.Base = base
	}
	// What the step changes of the record counts only if the step succeeds: a failed step is retried from
	// the record as it was (its rounds and iterations), so that the retry finds what the failed attempt
	// committed instead of doing it again.
	saved := ic.rec.clone()
	ic.saved = &saved
	var err error
	switch ev {
	case workflow.Triage:
		err = e.triage(ctx, ic)
	case workflow.Research:
		err = e.research(ctx, ic)
	case workflow.Plan:
		err = e.plan(ctx, ic)
	case workflow.Review:
		err = e.review(ctx, ic)
	case workflow.Implement:
		err = e.implement(ctx, ic)
	case workflow.PR:
		err = e.pullRequest(ctx, ic)
	case workflow.Merge:
		err = e.merge(ctx, ic)
	case workflow.Children:
		err = e.children(ctx, ic)
	default:
		err = fmt.Errorf("no step for %s", ev)
	}
	if errors.Is(err, errChildrenWaiting) {
		res.Step = ""
		res.Dispatch = ic.dispatch
		res.Message = fmt.Sprintf("#%d waits for its sub-issues: %s", ic.n, childSummary(ic.rec))
		return res, nil
	}
	if errors.Is(err, errWaiting) {
		res.Paused = true
		res.Message = fmt.Sprintf("#%d is In Review: the pull request %s is open and waits for people", ic.n, ic.rec.PRURL)
		return res, nil
	}
	var serr *StepError
	if errors.As(err, &serr) {
		return e.fail(ctx, ic, ev, from, serr)
	}
	if err != nil {
		return res, err
	}
	return e.finish(ctx, ic, ev, from)
}

func needsAgent(ev workflow.Event, c config.Config) bool {
	switch ev {
	case workflow.Merge, workflow.Children:
		return false
	case workflow.Review:
		return c.Review != config.ReviewSkip
	}
	return true
}

// restartState is the state a step starts from (a lock state's waiting state, for a taken-over step).
func restartState(s workflow.State) workflow.State {
	switch s {
	case workflow.ResearchInProgress:
		return workflow.ResearchNeeded
	case workflow.PlanInProgress:
		return workflow.ReadyForPlan
	}
	return s
}

func (e *Engine) baseBranch(ctx context.Context) (string, error) {
	if e.Config.BaseBranch != "" {
		return e.Config.BaseBranch, nil
	}
	// The remote's HEAD is its default branch: git says so without an API request.
	def, _, err := e.Workspaces.Repo().RemoteHeads(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the default branch: %w", err)
	}
	return def, nil
}

// finish records a step that completed.
func (e *Engine) finish(ctx context.Context, ic *issue, ev workflow.Event, from workflow.State) (Result, error) {
	to := ic.to
	if to == "" {
		to = ic.state
	}
	msg := e.describe(ev, from, to, ic)
	if to != workflow.HumanNeeded {
		ic.rec.FailedStep, ic.rec.Failures = "", 0
		ic.rec.Steps = append(ic.rec.Steps, Done{Step: ev, Note: msg})
	}
	if ic.takeover != "" {
		msg += fmt.Sprintf(" (after taking over a stale lock: %s)", ic.takeover)
	}
	if err := e.commit(ctx, ic, Run{Step: ev, From: from, To: to, At: e.now(), URL: e.Run.URL, Outcome: "done", Message: msg}); err != nil {
		return Result{Issue: ic.n, Step: ev, From: from, State: ic.state}, err
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: to, PRURL: ic.rec.PRURL, Message: msg, Dispatch: ic.dispatch}
	if ic.rec.Parent != 0 && to != from {
		res.Dispatch = append(res.Dispatch, ic.rec.Parent) // the parent follows its sub-issues
	}
	res.Paused, res.Continue = e.next(ic)
	return res, nil
}

// next says whether the issue now waits for a person, or has a step ralph can run right away.
func (e *Engine) next(ic *issue) (paused, cont bool) {
	switch ic.state {
	case workflow.HumanNeeded:
		return true, false
	case workflow.InReview:
		return true, false
	case workflow.PlanInReview:
		if e.Config.Review == config.ReviewInteractive {
			return true, false
		}
		return false, true
	case workflow.Done, workflow.Canceled:
		return false, false
	}
	if len(ic.rec.Children) > 0 {
		return false, false // a parent moves when its sub-issues do; they dispatch it
	}
	return false, true
}

func (e *Engine) describe(ev workflow.Event, from, to workflow.State, ic *issue) string {
	switch {
	case ev == workflow.Children && from == to:
		return "sub-issues: " + childSummary(ic.rec)
	case ev == workflow.Implement:
		return fmt.Sprintf("phase %d of %d done", ic.rec.phasesDone(), len(ic.rec.Phases))
	case from == to:
		return fmt.Sprintf("%s done; still %s", ev, to.Title())
	}
	return fmt.Sprintf("%s: %s → %s", ev, from.Title(), to.Title())
}

func (e *Engine) waitingMessage(ic *issue) string {
	switch ic.state {
	case workflow.HumanNeeded:
		return fmt.Sprintf("#%d needs a person: %s Say `/ralph retry` when it can go on.", ic.n, ic.rec.Reason)
	case workflow.Done:
		return fmt.Sprintf("#%d is done", ic.n)
	case workflow.Canceled:
		return fmt.Sprintf("#%d was canceled", ic.n)
	}
	return fmt.Sprintf("#%d is %s; nothing to do", ic.n, ic.state.Title())
}

// fail leaves the issue in the state its step started from, counts the failure, and sends the issue to Human
// Needed when the same step has now failed max_failures times in a row. An interrupted run (the workflow
// was cancelled) is recorded but not counted. Its writes use a context of their own, so that they happen
// even when the run's context is what ended.
func (e *Engine) fail(ctx context.Context, ic *issue, ev workflow.Event, from workflow.State, serr *StepError) (Result, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := restartState(from)
	var be *budgetError
	if errors.As(serr, &be) {
		e.Log.Warnf("#%d: %s stopped: %v", ic.n, ev, be)
	} else {
		e.Log.Warnf("#%d: %v", ic.n, serr)
	}
	res := Result{Issue: ic.n, Step: ev, From: from, State: start, Message: e.redact(serr.Error())}
	ic.to = ""
	if ic.state != start {
		if err := e.move(cctx, ic, workflow.Abort, start); err != nil {
			return res, errors.Join(serr, err)
		}
	}
	e.pushCommitted(cctx, ic)
	if ic.saved != nil {
		failed, failures := ic.rec.FailedStep, ic.rec.Failures
		ic.rec = *ic.saved
		ic.rec.FailedStep, ic.rec.Failures = failed, failures
	}
	e.explainTurnLimit(ic, serr)
	if be != nil {
		return e.budgetReached(cctx, ic, ev, from, start, be, res)
	}
	if cause := context.Cause(ctx); cause != nil {
		reason := "the run was interrupted: " + cause.Error()
		if err := e.commit(cctx, ic, Run{Step: ev, From: from, To: start, At: e.now(), URL: e.Run.URL, Outcome: "interrupted", Message: reason}); err != nil {
			return res, errors.Join(serr, err)
		}
		return res, serr
	}
	if ic.rec.FailedStep == ev {
		ic.rec.Failures++
	} else {
		ic.rec.FailedStep, ic.rec.Failures = ev, 1
	}
	var body string
	if ic.rec.Failures >= e.Config.MaxFailures {
		reason := fmt.Sprintf("The %s step failed %d times in a row; the last time: %s.", ev, ic.rec.Failures, serr.Reason)
		if err := e.escalate(cctx, ic, start, reason); err != nil {
			return res, errors.Join(serr, err)
		}
		res.State, res.Paused = workflow.HumanNeeded, true
		body = fmt.Sprintf("### ralph: %s failed, a person is needed\n\n%s\n\n%s\nWhat was produced before the failure is kept on the branch `%s`. Fix the cause (the issue, the config, the agent), then say `/ralph retry` (or run `gh ralph retry %d`) to go on from %s.",
			ev, reason, detail(serr), ic.rec.Branch, ic.n, start.Title())
	} else {
		res.Continue = true
		body = fmt.Sprintf("### ralph: %s failed (%d of %d)\n\n%s.\n\n%s\nThe issue stays in %s and ralph tries again on the next run; after %d failures in a row it stops and asks for a person. To retry now, re-run the workflow or run `gh ralph advance %d`.",
			ev, ic.rec.Failures, e.Config.MaxFailures, capitalize(serr.Reason), detail(serr), start.Title(), e.Config.MaxFailures, ic.n)
	}
	if err := e.notice(cctx, ic, fmt.Sprintf("failed %s %d", ev, ic.rec.Runs), e.redact(body)); err != nil {
		return res, errors.Join(serr, err)
	}
	if err := e.commit(cctx, ic, Run{Step: ev, From: from, To: res.State, At: e.now(), URL: e.Run.URL, Outcome: "failed", Message: e.redact(serr.Reason)}); err != nil {
		return res, errors.Join(serr, err)
	}
	return res, serr
}

// pushCommitted pushes a commit ralph built and checked in this step but had not pushed when the step
// stopped, so no finished work is lost. Nothing else is ever pushed: not the agent's own commits, whatever
// their messages say, and not a ref the agent moved.
func (e *Engine) pushCommitted(ctx context.Context, ic *issue) {
	ws := ic.ws
	if ws == nil || ws.Built() == "" {
		return
	}
	if err := e.push(ctx, ic, ws); err != nil {
		e.Log.Warnf("#%d: pushing the work committed before the stop: %v", ic.n, err)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func detail(serr *StepError) string {
	var b strings.Builder
	if serr.Err != nil {
		fmt.Fprintf(&b, "Error: `%s`\n\n", strings.ReplaceAll(serr.Err.Error(), "`", "'"))
	}
	var ae *agentFailure
	if errors.As(serr.Err, &ae) && ae.tail != "" {
		fmt.Fprintf(&b, "<details><summary>Last output</summary>\n\n````text\n%s\n````\n</details>\n\n", strings.ReplaceAll(ae.tail, "````", "'''"))
	}
	return b.String()
}

// escalate makes Human Needed the step's outcome, remembering where the issue was.
func (e *Engine) escalate(_ context.Context, ic *issue, before workflow.State, reason string) error {
	if err := workflow.Check(ic.state, workflow.Escalate, workflow.HumanNeeded); err != nil {
		return err
	}
	ic.rec.Before = before
	ic.rec.Reason = reason
	ic.to = workflow.HumanNeeded
	return nil
}

// agentFailure carries the tail of the agent's (or verify command's) output into the failure comment.
type agentFailure struct {
	err  error
	tail string
}

func (a *agentFailure) Error() string { return a.err.Error() }
func (a *agentFailure) Unwrap() error { return a.err }

// trailerKey marks ralph's commits with the step that made them ("Ralph-Step: plan/1").
const trailerKey = "Ralph-Step"

// done looks for the commit of step key on the branch: a run that crashed after pushing it left it there.
func (e *Engine) done(ctx context.Context, ws *workspace.Workspace, key string) (string, bool, error) {
	sha, found, err := ws.FindStep(ctx, trailerKey, key)
	if err != nil {
		return "", false, fmt.Errorf("looking for the commit of %s: %w", key, err)
	}
	return sha, found, nil
}

// checkout gives the agent a fresh copy of the issue's branch (of the base when the branch is new), with a
// HOME and TMPDIR of its own.
func (e *Engine) checkout(ctx context.Context, ic *issue) (*workspace.Workspace, error) {
	ws, err := e.Workspaces.Prepare(ctx, ic.n, ic.rec.Branch, ic.rec.Base)
	if err != nil {
		return nil, fmt.Errorf("preparing the agent's copy: %w", err)
	}
	ic.ws = ws
	return ws, nil
}

// artifactPath is where a document of kind (research, plans, reviews) lives in the branch.
func artifactPath(kind string, ic *issue, suffix string) string {
	return fmt.Sprintf("thoughts/shared/%s/%s-GH-%04d-%s%s.md", kind, ic.rec.Date, ic.n, ic.rec.Slug, suffix)
}

func (e *Engine) promptData(ctx context.Context, ic *issue, artifact string) (prompts.Data, error) {
	title, hidTitle := prompts.Clean(ic.gh.Title, prompts.MaxTitle)
	body, hidBody := prompts.Clean(ic.gh.Body, prompts.MaxBody)
	hidden := hidTitle.Add(hidBody)
	d := prompts.Data{
		Repository: ownerRepo(ic.gh.HTMLURL),
		Issue:      prompts.Issue{Number: ic.n, Title: title, Body: body, URL: ic.gh.HTMLURL},
		Artifact:   artifact,
		Branch:     ic.rec.Branch,
		Base:       ic.rec.Base,
		Verify:     e.Config.Verify,
		Protected:  e.Config.ProtectedPaths,
	}
	for _, c := range ic.comments {
		if c.User.IsBot() || strings.HasPrefix(c.Body, StatusMarker) {
			continue
		}
		// Anyone can comment on a public issue; only people who may drive ralph reach the agent.
		ok, err := e.trusted(ctx, ic, c.User.Login)
		if err != nil {
			return d, err
		}
		if !ok {
			d.Omitted++
			continue
		}
		text, hid := prompts.Clean(c.Body, prompts.MaxComment)
		hidden = hidden.Add(hid)
		d.Comments = append(d.Comments, prompts.Comment{Author: c.User.Login, Body: text})
	}
	d.Hidden = hidden.String()
	return d, nil
}

// trusted says whether login may drive ralph, asking GitHub once per login and run.
func (e *Engine) trusted(ctx context.Context, ic *issue, login string) (bool, error) {
	if e.Auth == nil {
		return true, nil
	}
	if ic.trusted == nil {
		ic.trusted = map[string]bool{}
	}
	if ok, seen := ic.trusted[login]; seen {
		return ok, nil
	}
	ok, err := e.Auth.Authorize(ctx, login)
	if err != nil {
		return false, fmt.Errorf("checking the permission of @%s: %w", login, err)
	}
	ic.trusted[login] = ok
	return ok, nil
}

// ownerRepo takes "owner/repo" out of an issue's web URL.
func ownerRepo(htmlURL string) string {
	parts := strings.Split(strings.TrimRight(htmlURL, "/"), "/")
	if len(parts) >= 4 {
		return parts[len(parts)-4] + "/" + parts[len(parts)-3]
	}
	return ""
}

// runAgent renders the prompt and runs the agent once.
func (e *Engine) runAgent(ctx context.Context, ic *issue, ws *workspace.Workspace, command, artifact string, phase, phases int, d prompts.Data) error {
	prompt, err := e.Prompts.Render(command, d)
	if err != nil {
		return &StepError{Step: command, Reason: "the prompt template could not be rendered", Err: err}
	}
	boundary, err := e.boundary(ws)
	if err != nil {
		return err
	}
	gw, access, err := e.openGateway(ctx, ic, command)
	if err != nil {
		return err
	}
	out, end := e.Log.Untrusted(fmt.Sprintf("agent: %s for #%d", command, ic.n))
	res, err := e.Agent.Run(ctx, agent.Invocation{
		Command: command, Issue: ic.n, Artifact: artifact, Phase: phase, Phases: phases,
		Dir: ws.Dir, TempDir: ws.Tmp, Prompt: prompt, Env: e.agentEnv(ws), Timeout: e.Config.Agent.Timeout,
		Output: out, Boundary: boundary, Gateway: access,
	})
	end()
	if gw != nil {
		if stop := e.closeGateway(ctx, ic, command, gw, &res); stop != nil {
			e.noteUsage(ic, command, res.Usage)
			return &StepError{Step: command, Reason: "the agent was stopped", Err: &budgetError{limit: stop.Limit, spent: *res.Usage}}
		}
	}
	e.noteUsage(ic, command, res.Usage)
	if err != nil && keepAfterTurnLimit(res) {
		// What the agent produced before its turn limit is checked like any other step's work.
		e.Log.Warnf("the agent stopped at its turn limit (agent.max_turns: %d); keeping what it produced", e.Config.Agent.MaxTurns)
		err = nil
	}
	if err != nil {
		reason := fmt.Sprintf("the agent exited with code %d", res.ExitCode)
		switch {
		case res.Usage != nil && res.Usage.OverBudget:
			reason = fmt.Sprintf("the agent was stopped: the cost it reported ($%.4f) went over agent.max_cost ($%.2f)", res.Usage.CostUSD, e.Config.Agent.MaxCost)
		case res.TimedOut:
			reason = fmt.Sprintf("the agent timed out after %s (agent.timeout)", e.Config.Agent.Timeout)
		case res.Interrupted:
			reason = "the run was interrupted while the agent was working"
		case res.ExitCode == 0:
			reason = "the agent could not be run"
		}
		return &StepError{Step: command, Reason: reason, Err: &agentFailure{err: err, tail: res.Tail}}
	}
	e.Log.Infof("agent %s finished in %s", command, res.Duration.Round(1e6))
	return nil
}

// boundary is the agent's confinement for one step: the door's settings, with the step's copy, HOME and
// TMPDIR as the only places it may write.
func (e *Engine) boundary(ws *workspace.Workspace) (*sandbox.Boundary, error) {
	cfg := e.Sandbox
	cfg.Writable = append(ws.Writable(), e.Sandbox.Writable...)
	b, err := sandbox.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("setting up the agent's boundary: %w", err)
	}
	return b, nil
}

// guard records the agent's files in ralph's own index and refuses a change to protected paths, gitlinks,
// oversized files and symlinks that leave the repository.
func (e *Engine) guard(ctx context.Context, ws *workspace.Workspace, step string) ([]git.Change, error) {
	changes, err := ws.Collect(ctx)
	var refused *workspace.RefusedError
	if errors.As(err, &refused) {
		return nil, &StepError{Step: step, Reason: refused.Error() + "; nothing was pushed"}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the agent's changes: %w", err)
	}
	return changes, nil
}

// writeDoc runs a document step's agent and returns the document it wrote.
func (e *Engine) writeDoc(ctx context.Context, ic *issue, ws *workspace.Workspace, command, rel string, d prompts.Data) (string, error) {
	if err := ws.Clear(rel); err != nil {
		return "", err
	}
	abs := filepath.Join(ws.Dir, filepath.FromSlash(rel))
	d.Artifact = abs
	if err := e.runAgent(ctx, ic, ws, command, abs, 0, 0, d); err != nil {
		var be *budgetError
		if errors.As(err, &be) && !be.before {
			// Stopped at a budget: what the agent wrote so far is kept (document).
			if b, derr := ws.Document(rel); derr == nil && strings.TrimSpace(string(b)) != "" {
				return string(b), err
			}
			be.kept = "The agent had written no document; nothing was committed."
		}
		return "", err
	}
	b, err := ws.Document(rel)
	if err != nil {
		return "", documentError(command, rel, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", &StepError{Step: command, Reason: fmt.Sprintf("the document at %s is empty", rel)}
	}
	return string(b), nil
}

// documentError turns a document ralph could not read into the step's failure.
func documentError(command, rel string, err error) error {
	var de *workspace.DocumentError
	switch {
	case errors.Is(err, workspace.ErrNoDocument):
		return &StepError{Step: command, Reason: fmt.Sprintf("the agent did not write the document at %s (RALPH_ARTIFACT)", rel)}
	case errors.As(err, &de):
		return &StepError{Step: command, Reason: de.Error()}
	}
	return err
}

// commitDoc commits only the document, as ralph read and checked it (other edits of a document step are
// not its product), with msg (which marks it with the step's key), and pushes.
func (e *Engine) commitDoc(ctx context.Context, ic *issue, ws *workspace.Workspace, rel, doc, msg string) error {
	if err := e.refuseLeak("commit", "the document", doc); err != nil {
		return err
	}
	_, err := ws.CommitDocument(ctx, rel, []byte(doc), msg, e.Author)
	var refused *workspace.RefusedError
	if errors.As(err, &refused) {
		return &StepError{Step: "commit", Reason: refused.Error() + "; nothing was pushed"}
	}
	if err != nil {
		return fmt.Errorf("committing %s: %w", rel, err)
	}
	e.checkpoint("after-commit")
	if err := e.push(ctx, ic, ws); err != nil {
		return err
	}
	e.checkpoint("after-push")
	return nil
}

// docStep is one document step: research, plan, review or self-review.
type docStep struct {
	kind    string // the artifact kind and the step's key name
	command string // the agent command
	header  string // the artifact comment's first line
	rel     string // the document's path in the branch
	subject string // the commit's subject
	check   func(doc string) error
}

// document runs a document step: the agent writes the document, check accepts it, ralph commits it with the
// step's key and pushes it, and posts it. A rerun after a crash finds the commit on the branch and the comment
// on the issue by that key, and repeats neither.
func (e *Engine) document(ctx context.Context, ic *issue, ws *workspace.Workspace, st docStep, d prompts.Data) (string, Artifact, error) {
	key := ic.rec.stepKey(st.kind)
	_, found, err := e.done(ctx, ws, key)
	if err != nil {
		return "", Artifact{}, err
	}
	var doc string
	if found {
		e.Log.Infof("#%d: %s is already on the branch (an earlier run stopped before recording it); using it", ic.n, key)
		if doc, err = ws.Committed(ctx, st.rel); err != nil {
			return "", Artifact{}, err
		}
	} else if doc, err = e.writeDoc(ctx, ic, ws, st.command, st.rel, d); err != nil {
		var be *budgetError
		if doc != "" && errors.As(err, &be) {
			e.keepDocument(ctx, ic, ws, st, key, doc, be)
		}
		return "", Artifact{}, err
	}
	if st.check != nil {
		if err := st.check(doc); err != nil {
			return "", Artifact{}, &StepError{Step: st.command, Reason: err.Error()}
		}
	}
	if !found {
		if err := e.commitDoc(ctx, ic, ws, st.rel, doc, st.subject+"\n\n"+trailerKey+": "+key); err != nil {
			return "", Artifact{}, err
		}
	}
	art, err := e.postArtifact(ctx, ic, st.header, key, st.rel, doc)
	if err != nil {
		return "", Artifact{}, err
	}
	e.checkpoint("after-comment")
	ic.rec.doneRound(st.kind)
	return doc, art, nil
}

func (e *Engine) push(ctx context.Context, ic *issue, ws *workspace.Workspace) error {
	if err := ws.Push(ctx); err != nil {
		var rej *git.PushRejectedError
		if errors.As(err, &rej) {
			return &StepError{Step: "push", Reason: fmt.Sprintf("the push to %s was refused (the branch moved, or a rule forbids it)", ic.rec.Branch), Err: err}
		}
		return fmt.Errorf("pushing %s: %w", ic.rec.Branch, err)
	}
	return nil
}

// artifactMarker identifies an artifact comment, so a repeated run edits it instead of posting it twice.
func artifactMarker(key string) string {
	return "<!-- ralph:artifact " + key + " -->"
}

// postArtifact posts (or, when a crashed run already posted it, edits) the document's comment.
func (e *Engine) postArtifact(ctx context.Context, ic *issue, header, key, rel, doc string) (Artifact, error) {
	url := e.GitHub.BlobURL(ic.rec.Branch, rel)
	marker := artifactMarker(key)
	body := fmt.Sprintf("%s\n%s\n\nFile: [`%s`](%s) on branch `%s`\n\n<details open><summary>Document</summary>\n\n%s\n\n</details>",
		header, marker, rel, url, ic.rec.Branch, truncate(doc, 60000))
	cm, err := e.upsertComment(ctx, ic, marker, body)
	if err != nil {
		return Artifact{Path: rel, URL: url}, err
	}
	return Artifact{Path: rel, URL: url, Comment: cm.HTMLURL}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n\n… (truncated; the whole document is in the file)"
}

func (e *Engine) setArtifact(ic *issue, kind string, a Artifact) {
	if ic.rec.Artifacts == nil {
		ic.rec.Artifacts = map[string]Artifact{}
	}
	ic.rec.Artifacts[kind] = a
}

// begin moves the issue into the step's lock state.
func (e *Engine) begin(ctx context.Context, ic *issue, ev workflow.Event) error {
	running, ok := workflow.RunningState(ev)
	if !ok || ic.state == running {
		return nil
	}
	return e.moveNow(ctx, ic, workflow.Start, running)
}

func (e *Engine) research(ctx context.Context, ic *issue) error {
	if err := e.begin(ctx, ic, workflow.Research); err != nil {
		return err
	}
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return err
	}
	d, err := e.promptData(ctx, ic, "")
	if err != nil {
		return err
	}
	_, art, err := e.document(ctx, ic, ws, docStep{
		kind: "research", command: "research", header: "## Research Document",
		rel: artifactPath("research", ic, ""), subject: fmt.Sprintf("ralph: research for #%d %s", ic.n, Inert(ic.gh.Title)),
	}, d)
	if err != nil {
		return err
	}
	e.setArtifact(ic, "research", art)
	return e.move(ctx, ic, workflow.Research, workflow.ReadyForPlan)
}

var phaseHeading = regexp.MustCompile(`(?m)^## Phase (\d+): *(.+?)\s*$`)

// ParsePhases reads a plan's "## Phase N: title" headings with their sections; the numbers must run 1..M.
func ParsePhases(plan string) ([]Phase, error) {
	locs := phaseHeading.FindAllStringSubmatchIndex(plan, -1)
	if len(locs) == 0 {
		return nil, errors.New("the plan has no `## Phase N: <title>` headings")
	}
	phases := make([]Phase, 0, len(locs))
	for i, l := range locs {
		num, _ := strconv.Atoi(plan[l[2]:l[3]])
		if num != i+1 {
			return nil, fmt.Errorf("the plan's phase headings must be numbered 1, 2, 3… in order; heading %d says Phase %d", i+1, num)
		}
		end := len(plan)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		// A section ends at the next heading of level 1 or 2 as well.
		sec := plan[l[0]:end]
		if j := regexp.MustCompile(`(?m)^#{1,2} `).FindAllStringIndex(sec, 2); len(j) == 2 {
			sec = sec[:j[1][0]]
		}
		phases = append(phases, Phase{Title: plan[l[4]:l[5]], Text: strings.TrimSpace(sec)})
	}
	return phases, nil
}

// readBranchFile reads an earlier document from ralph's repository at the commit the step began from
// (never from the agent's copy); "" when it is not there.
func (e *Engine) readBranchFile(ctx context.Context, ws *workspace.Workspace, rel string) string {
	doc, err := ws.Committed(ctx, rel)
	if err != nil {
		e.Log.Warnf("reading %s: %v", rel, err)
	}
	return doc
}

func (e *Engine) plan(ctx context.Context, ic *issue) error {
	if err := e.begin(ctx, ic, workflow.Plan); err != nil {
		return err
	}
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return err
	}
	rel := artifactPath("plans", ic, "")
	d, err := e.promptData(ctx, ic, "")
	if err != nil {
		return err
	}
	d.Research = e.readBranchFile(ctx, ws, ic.rec.Artifacts["research"].Path)
	d.Feedback = ic.rec.Feedback
	if d.Feedback != "" {
		d.Plan = e.readBranchFile(ctx, ws, rel)
	}
	var phases []Phase
	_, art, err := e.document(ctx, ic, ws, docStep{
		kind: "plan", command: "plan", header: "## Implementation Plan", rel: rel,
		subject: fmt.Sprintf("ralph: plan for #%d %s", ic.n, Inert(ic.gh.Title)),
		check:   func(doc string) (err error) { phases, err = ParsePhases(doc); return err },
	}, d)
	if err != nil {
		return err
	}
	e.setArtifact(ic, "plan", art)
	for i := range phases {
		phases[i].Text = "" // the plan file holds it; the record stays small
	}
	ic.rec.Phases = phases
	if err := e.toggleLabel(ctx, ic, workflow.LabelNeedsIteration, false); err != nil {
		return err
	}
	return e.move(ctx, ic, workflow.Plan, workflow.PlanInReview)
}

var verdictLine = regexp.MustCompile(`(?m)^\W{0,3}VERDICT:\s*\**\s*(APPROVED|NEEDS_ITERATION)\b`)

// ParseVerdict finds the review's verdict line; the last one counts.
func ParseVerdict(doc string) (string, error) {
	m := verdictLine.FindAllStringSubmatch(doc, -1)
	if len(m) == 0 {
		return "", errors.New("the review has no `VERDICT: APPROVED` or `VERDICT: NEEDS_ITERATION` line")
	}
	return m[len(m)-1][1], nil
}

func (e *Engine) review(ctx context.Context, ic *issue) error {
	if e.Config.Review == config.ReviewSkip {
		e.setArtifact(ic, "review", Artifact{Verdict: "APPROVED (review: skip)"})
		return e.move(ctx, ic, workflow.Review, workflow.InProgress)
	}
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return err
	}
	d, err := e.promptData(ctx, ic, "")
	if err != nil {
		return err
	}
	d.Plan = e.readBranchFile(ctx, ws, ic.rec.Artifacts["plan"].Path)
	var verdict string
	_, art, err := e.document(ctx, ic, ws, docStep{
		kind: "review", command: "review", header: "## Plan Review", rel: artifactPath("reviews", ic, ""),
		subject: fmt.Sprintf("ralph: plan review for #%d %s", ic.n, Inert(ic.gh.Title)),
		check:   func(doc string) (err error) { verdict, err = ParseVerdict(doc); return err },
	}, d)
	if err != nil {
		return err
	}
	art.Verdict = verdict
	e.setArtifact(ic, "review", art)
	if verdict == "APPROVED" {
		ic.rec.Feedback = ""
		return e.move(ctx, ic, workflow.Review, workflow.InProgress)
	}
	return e.sendBack(ctx, ic, workflow.Review, "the plan review: "+art.Comment, "The plan review sent the plan back")
}

// sendBack returns a plan for another iteration, or to a person once max_iterations is reached.
func (e *Engine) sendBack(ctx context.Context, ic *issue, ev workflow.Event, feedback, who string) error {
	ic.rec.PlanIterations++
	ic.rec.Feedback = feedback
	if ic.rec.PlanIterations >= e.Config.MaxIterations {
		reason := fmt.Sprintf("%s %d times (max_iterations: %d).", who, ic.rec.PlanIterations, e.Config.MaxIterations)
		ic.rec.Before = workflow.ReadyForPlan
		ic.rec.Reason = reason
		if err := e.move(ctx, ic, ev, workflow.HumanNeeded); err != nil {
			return err
		}
		return e.notice(ctx, ic, fmt.Sprintf("human %d", ic.rec.Runs), fmt.Sprintf("### ralph needs a person\n\n%s Edit the issue to make it clearer, or plan it yourself, then say `/ralph retry` (or run `gh ralph retry %d`) to plan again.", reason, ic.n))
	}
	if err := e.toggleLabel(ctx, ic, workflow.LabelNeedsIteration, true); err != nil {
		return err
	}
	return e.move(ctx, ic, ev, workflow.ReadyForPlan)
}

// verify runs the configured commands in the worktree; all must pass.
// The commands run the agent's code, so they run inside the agent's boundary, and nothing they start
// outlives them.
func (e *Engine) verify(ctx context.Context, ic *issue, ws *workspace.Workspace, phase, phases int) error {
	boundary, err := e.boundary(ws)
	if err != nil {
		return err
	}
	for _, cmd := range e.Config.Verify {
		out, end := e.Log.Untrusted("verify: " + cmd)
		res, err := (&agent.Command{Shell: cmd}).Run(ctx, agent.Invocation{
			Command: "verify", Issue: ic.n, Phase: phase, Phases: phases, Dir: ws.Dir, TempDir: ws.Tmp,
			Env: e.agentEnv(ws), Timeout: e.Config.Agent.Timeout, Output: out, Boundary: boundary,
		})
		end()
		if err != nil {
			reason := fmt.Sprintf("verify command `%s` failed (exit code %d)", cmd, res.ExitCode)
			if res.TimedOut {
				reason = fmt.Sprintf("verify command `%s` timed out", cmd)
			}
			return &StepError{Step: "verify", Reason: reason, Err: &agentFailure{err: err, tail: res.Tail}}
		}
	}
	return nil
}

func (e *Engine) implement(ctx context.Context, ic *issue) error {
	k, _ := ic.rec.phasesLeft()
	m := len(ic.rec.Phases)
	ph := ic.rec.Phases[k]
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("implement/%d/%d", ic.rec.Rounds["plan"], k+1)
	if sha, found, err := e.done(ctx, ws, key); err != nil {
		return err
	} else if found {
		e.Log.Infof("#%d: phase %d is already on the branch (an earlier run stopped before recording it)", ic.n, k+1)
		ic.rec.Phases[k].SHA = sha
		return e.move(ctx, ic, workflow.Implement, workflow.InProgress)
	}
	d, err := e.promptData(ctx, ic, "")
	if err != nil {
		return err
	}
	d.Plan = e.readBranchFile(ctx, ws, ic.rec.Artifacts["plan"].Path)
	d.Phase, d.Phases = k+1, m
	d.PhaseText = ph.Text
	if d.PhaseText == "" {
		if all, err := ParsePhases(d.Plan); err == nil && k < len(all) {
			d.PhaseText = all[k].Text
		}
	}
	if d.PhaseText == "" {
		d.PhaseText = "## Phase " + strconv.Itoa(k+1) + ": " + ph.Title
	}
	if err := e.runAgent(ctx, ic, ws, "implement", "", k+1, m, d); err != nil {
		var be *budgetError
		if errors.As(err, &be) && !be.before {
			e.keepPhase(ctx, ic, ws, k, m, key, be)
		}
		return err
	}
	head, err := e.commitPhase(ctx, ic, ws, k, m, key)
	if err != nil {
		return err
	}
	ic.rec.Phases[k].SHA = head
	return e.move(ctx, ic, workflow.Implement, workflow.InProgress)
}

// commitPhase checks the agent's changes of phase k (of m), runs verify, commits them with the phase's key
// and pushes.
func (e *Engine) commitPhase(ctx context.Context, ic *issue, ws *workspace.Workspace, k, m int, key string) (string, error) {
	changes, err := e.guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if len(changes) == 0 {
		return "", &StepError{Step: "implement", Reason: fmt.Sprintf("phase %d of %d changed no file", k+1, m)}
	}
	if err := e.verify(ctx, ic, ws, k+1, m); err != nil {
		return "", err
	}
	// verify may have written files (a build, a formatter): check them too.
	changes, err = e.guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if err := e.scanSecrets(ws, changes); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph: Phase %d of %d: #%d %s\n\n%s: %s", k+1, m, ic.n, Inert(ic.rec.Phases[k].Title), trailerKey, key)
	head, err := ws.Commit(ctx, msg, e.Author)
	if err != nil {
		return "", fmt.Errorf("committing phase %d: %w", k+1, err)
	}
	e.checkpoint("after-commit")
	if err := e.push(ctx, ic, ws); err != nil {
		return "", err
	}
	e.checkpoint("after-push")
	return head, nil
}

func (e *Engine) pullRequest(ctx context.Context, ic *issue) error {
	if e.Config.SelfReview {
		ws, err := e.checkout(ctx, ic)
		if err != nil {
			return err
		}
		diff, err := ws.Diff(ctx)
		if err != nil {
			return err
		}
		d, err := e.promptData(ctx, ic, "")
		if err != nil {
			return err
		}
		d.Plan = e.readBranchFile(ctx, ws, ic.rec.Artifacts["plan"].Path)
		d.Diff = truncate(diff, 200000)
		var verdict string
		doc, art, err := e.document(ctx, ic, ws, docStep{
			kind: "self-review", command: "self-review", header: "## Self-Review",
			rel:     artifactPath("reviews", ic, "-self-review"),
			subject: fmt.Sprintf("ralph: self-review for #%d %s", ic.n, Inert(ic.gh.Title)),
			check:   func(doc string) (err error) { verdict, err = ParseVerdict(doc); return err },
		}, d)
		if err != nil {
			return err
		}
		art.Verdict = verdict
		e.setArtifact(ic, "self-review", art)
		if verdict != "APPROVED" {
			ic.rec.ReviewIterations++
			if ic.rec.ReviewIterations >= e.Config.MaxIterations {
				reason := fmt.Sprintf("The self-review sent the change back %d times (max_iterations: %d).", ic.rec.ReviewIterations, e.Config.MaxIterations)
				if err := e.escalate(ctx, ic, workflow.InProgress, reason); err != nil {
					return err
				}
				return e.notice(ctx, ic, fmt.Sprintf("human %d", ic.rec.Runs), fmt.Sprintf("### ralph needs a person\n\n%s The branch `%s` holds the work so far. Finish it by hand, or say `/ralph retry` to let ralph try once more.", reason, ic.rec.Branch))
			}
			ic.rec.Phases = append(ic.rec.Phases, Phase{
				Title: fmt.Sprintf("Address self-review %d", ic.rec.ReviewIterations),
				Text:  fmt.Sprintf("## Phase %d: Address self-review %d\n\nFix every finding of the self-review below.\n\n%s", len(ic.rec.Phases)+1, ic.rec.ReviewIterations, doc),
				Fix:   true,
			})
			return e.move(ctx, ic, workflow.PR, workflow.InProgress)
		}
	}
	// A run that stopped after opening the pull request left it open: find it before opening one.
	pr, err := e.GitHub.FindPull(ctx, ic.rec.Branch, ic.rec.Base)
	if err != nil {
		return err
	}
	if pr == nil || pr.State != "open" {
		created, err := e.GitHub.CreatePull(ctx, ghapi.NewPull{
			Title: fmt.Sprintf("%s (#%d)", Inert(ic.gh.Title), ic.n),
			Body:  e.pullBody(ic),
			Head:  ic.rec.Branch,
			Base:  ic.rec.Base,
			Draft: e.Config.DraftPR,
		})
		if err != nil {
			var ge *ghapi.Error
			if errors.As(err, &ge) && ge.Status == 422 {
				// "A pull request already exists" can be the answer to a repeat of our own create (the
				// client retried a 5xx GitHub gave after opening it): look again before calling it a failure.
				if again, ferr := e.GitHub.FindPull(ctx, ic.rec.Branch, ic.rec.Base); ferr == nil && again != nil && again.State == "open" {
					created, err = *again, nil
				} else {
					return &StepError{Step: "pr", Reason: "GitHub refused the pull request", Err: err}
				}
			} else {
				return err
			}
		}
		pr = &created
		e.checkpoint("after-pr")
	}
	ic.rec.PR, ic.rec.PRURL = pr.Number, pr.HTMLURL
	return e.move(ctx, ic, workflow.PR, workflow.InReview)
}

func (e *Engine) pullBody(ic *issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Summary\n\nThis pull request resolves #%d, %s, in %d phases planned, reviewed and implemented by ralph.\n\n", ic.n, Inert(ic.gh.Title), len(ic.rec.Phases))
	b.WriteString("## Phases\n\n")
	for i, p := range ic.rec.Phases {
		fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, Inert(p.Title), short(p.SHA))
	}
	b.WriteString("\n## Documents\n\n")
	for _, kind := range []string{"research", "plan", "review", "self-review"} {
		a, ok := ic.rec.Artifacts[kind]
		if !ok || a.URL == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s: [`%s`](%s)", artifactTitle(kind), a.Path, a.URL)
		if a.Comment != "" {
			fmt.Fprintf(&b, " ([comment](%s))", a.Comment)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nCloses #%d\n", ic.n)
	return b.String()
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func artifactTitle(kind string) string {
	switch kind {
	case "research":
		return "Research"
	case "plan":
		return "Plan"
	case "review":
		return "Plan review"
	case "self-review":
		return "Self-review"
	case "triage":
		return "Triage"
	}
	return kind
}

func (e *Engine) merge(ctx context.Context, ic *issue) error {
	var pr *ghapi.PullRequest
	if ic.rec.PR != 0 {
		p, err := e.GitHub.Pull(ctx, ic.rec.PR)
		if err != nil {
			return err
		}
		pr = &p
	} else {
		p, err := e.GitHub.FindPull(ctx, ic.rec.Branch, ic.rec.Base)
		if err != nil {
			return err
		}
		pr = p
	}
	switch {
	case pr == nil:
		return e.escalate(ctx, ic, workflow.InReview, "The issue is In Review but ralph finds no pull request for its branch.")
	case pr.IsMerged():
		ic.rec.PR, ic.rec.PRURL = pr.Number, pr.HTMLURL
		return e.move(ctx, ic, workflow.Merge, workflow.Done)
	case pr.State == "closed":
		reason := fmt.Sprintf("The pull request #%d was closed without being merged.", pr.Number)
		ic.rec.Before = workflow.InProgress
		ic.rec.Reason = reason
		if err := e.move(ctx, ic, workflow.Merge, workflow.HumanNeeded); err != nil {
			return err
		}
		return e.notice(ctx, ic, fmt.Sprintf("human %d", ic.rec.Runs), fmt.Sprintf("### ralph needs a person\n\n%s Reopen it, or say `/ralph retry` to let ralph work on the branch again.", reason))
	}
	return errWaiting
}

// errWaiting: the step found nothing to do yet (an open pull request).
var errWaiting = errors.New("waiting")

var decisionLine = regexp.MustCompile(`(?m)^\W{0,3}DECISION:\s*\**\s*(research|plan|done|canceled|cancelled|split)\b`)

func (e *Engine) triage(ctx context.Context, ic *issue) error {
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return err
	}
	// The decision is not committed: it goes in the agent's TMPDIR.
	abs := filepath.Join(ws.Tmp, "triage.md")
	d, err := e.promptData(ctx, ic, abs)
	if err != nil {
		return err
	}
	if err := e.runAgent(ctx, ic, ws, "triage", abs, 0, 0, d); err != nil {
		return err
	}
	b, err := ws.TempDocument("triage.md")
	if errors.Is(err, workspace.ErrNoDocument) {
		return &StepError{Step: "triage", Reason: "the agent did not write its decision at RALPH_ARTIFACT"}
	}
	if err != nil {
		return documentError("triage", "RALPH_ARTIFACT", err)
	}
	if err := e.refuseLeak("triage", "the triage", string(b)); err != nil {
		return err
	}
	m := decisionLine.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return &StepError{Step: "triage", Reason: "the triage has no `DECISION: research|plan|done|canceled` line"}
	}
	decision := m[len(m)-1][1]
	if decision == "split" {
		subs, err := ParseSplit(string(b))
		if err != nil {
			return &StepError{Step: "triage", Reason: "the triage decided to split the issue, but " + err.Error()}
		}
		if err := e.split(ctx, ic, subs); err != nil {
			return err
		}
	}
	to := map[string]workflow.State{"research": workflow.ResearchNeeded, "plan": workflow.ReadyForPlan, "done": workflow.Done, "canceled": workflow.Canceled, "cancelled": workflow.Canceled, "split": workflow.InProgress}[decision]
	if to == workflow.ResearchNeeded && !e.Config.Research {
		to = workflow.ReadyForPlan
	}
	cm, err := e.upsertComment(ctx, ic, fmt.Sprintf("<!-- ralph:notice triage %d -->", ic.rec.Runs), fmt.Sprintf("## Triage\n\n%s", truncate(string(b), 60000)))
	if err != nil {
		return err
	}
	e.setArtifact(ic, "triage", Artifact{Comment: cm.HTMLURL, Verdict: string(to)})
	return e.move(ctx, ic, workflow.Triage, to)
}

// scanSecrets refuses a change whose files hold the value of a secret the agent holds (agent.env's
// pass-through variables) or ralph's token: a prompt-injected agent would commit it, and ralph would push
// it to GitHub.
func (e *Engine) scanSecrets(ws *workspace.Workspace, changes []git.Change) error {
	secrets := e.secrets()
	if len(secrets) == 0 {
		return nil
	}
	var bad []string
	for _, c := range changes {
		if c.Status == "D" || c.NewMode == "120000" || c.NewMode == "160000" {
			continue
		}
		b, err := ws.Read(c.Path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.Path, err)
		}
		if names := leaksIn(secrets, string(b)); len(names) > 0 {
			bad = append(bad, fmt.Sprintf("`%s` (holds the value of %s)", c.Path, strings.Join(names, ", ")))
		}
	}
	if len(bad) > 0 {
		return &StepError{Step: "implement", Reason: "the change holds a secret the agent holds: " + strings.Join(bad, ", ") + "; nothing was pushed"}
	}
	return nil
}
