package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

func (e *Engine) research(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	ws, d, err := e.prepare(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	_, art, err := e.document(ctx, ic, rec, ws, docStep{
		kind: "research", command: "research", header: "## Research Document",
		rel: artifactPath("research", ic, ""), subject: fmt.Sprintf("ralph: research for #%d %s", ic.n, Inert(ic.gh.Title)),
	}, d)
	if err != nil {
		return Outcome{}, err
	}
	rec.setArtifact("research", art)
	return Outcome{To: workflow.ReadyForPlan}, nil
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

// maxPhaseTitle bounds a phase's title: it is a commit's subject and a line of the record.
const maxPhaseTitle = 200

// checkPhases says why ralph will not work through a plan's phases ("" when it will): more than max_phases,
// or a title too long for a commit's subject.
func checkPhases(phases []Phase, limit int) string {
	if limit < 1 { // a Config not made by config.Default or Parse
		limit = config.Default().MaxPhases
	}
	if len(phases) > limit {
		return fmt.Sprintf("The plan has %d phases; a plan may have at most %d (max_phases: %d). No phase was started.", len(phases), limit, limit)
	}
	for i, p := range phases {
		if n := utf8.RuneCountInString(p.Title); n > maxPhaseTitle {
			return fmt.Sprintf("The title of phase %d is %d characters; ralph takes at most %d. No phase was started.", i+1, n, maxPhaseTitle)
		}
	}
	return ""
}

func (e *Engine) plan(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	ws, d, err := e.prepare(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	rel := artifactPath("plans", ic, "")
	d.Research = e.readBranchFile(ctx, ws, rec.Artifacts["research"].Path)
	d.Feedback = rec.Feedback
	if d.Feedback != "" {
		d.Plan = e.readBranchFile(ctx, ws, rel)
	}
	var phases []Phase
	_, art, err := e.document(ctx, ic, rec, ws, docStep{
		kind: "plan", command: "plan", header: "## Implementation Plan", rel: rel,
		subject: fmt.Sprintf("ralph: plan for #%d %s", ic.n, Inert(ic.gh.Title)),
		check:   func(doc string) (err error) { phases, err = ParsePhases(doc); return err },
	}, d)
	if err != nil {
		return Outcome{}, err
	}
	rec.setArtifact("plan", art)
	if why := checkPhases(phases, e.Config.MaxPhases); why != "" {
		// Each phase is a run of the agent, a commit and a line of the record: a plan with too many goes to
		// a person before any runs.
		return Outcome{Person: &Escalation{
			Before: workflow.ReadyForPlan,
			Reason: why,
			Advice: fmt.Sprintf("Read the plan above. Make the issue smaller (or split it), or raise `max_phases` in .github/ralph.yml, then say `/ralph retry` (or run `gh ralph retry %d`) to plan again.", ic.n),
		}}, nil
	}
	for i := range phases {
		phases[i].Text = "" // the plan file holds it; the record stays small
	}
	rec.Phases = phases
	return Outcome{To: workflow.PlanInReview, Labels: map[string]bool{workflow.LabelNeedsIteration: false}}, nil
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

func (e *Engine) review(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	if e.Config.Review == config.ReviewSkip {
		rec.setArtifact("review", Artifact{Verdict: "APPROVED (review: skip)"})
		return Outcome{To: workflow.InProgress}, nil
	}
	ws, d, err := e.prepare(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = e.readBranchFile(ctx, ws, rec.Artifacts["plan"].Path)
	var verdict string
	_, art, err := e.document(ctx, ic, rec, ws, docStep{
		kind: "review", command: "review", header: "## Plan Review", rel: artifactPath("reviews", ic, ""),
		subject: fmt.Sprintf("ralph: plan review for #%d %s", ic.n, Inert(ic.gh.Title)),
		check:   func(doc string) (err error) { verdict, err = ParseVerdict(doc); return err },
	}, d)
	if err != nil {
		return Outcome{}, err
	}
	art.Verdict = verdict
	rec.setArtifact("review", art)
	if verdict == "APPROVED" {
		rec.Feedback = ""
		return Outcome{To: workflow.InProgress}, nil
	}
	return e.sendBack(ic.n, rec, "the plan review: "+art.Comment, "The plan review sent the plan back"), nil
}

// sendBack returns a plan for another iteration, or to a person once max_iterations is reached.
func (e *Engine) sendBack(n int, rec *Record, feedback, who string) Outcome {
	rec.PlanIterations++
	rec.Feedback = feedback
	if rec.PlanIterations >= e.Config.MaxIterations {
		return Outcome{Person: &Escalation{
			Before: workflow.ReadyForPlan,
			Reason: fmt.Sprintf("%s %d times (max_iterations: %d).", who, rec.PlanIterations, e.Config.MaxIterations),
			Advice: fmt.Sprintf("Edit the issue to make it clearer, or plan it yourself, then say `/ralph retry` (or run `gh ralph retry %d`) to plan again.", n),
		}}
	}
	return Outcome{To: workflow.ReadyForPlan, Labels: map[string]bool{workflow.LabelNeedsIteration: true}}
}

func (e *Engine) implement(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	k, _ := rec.phasesLeft()
	m := len(rec.Phases)
	ph := rec.Phases[k]
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	key := fmt.Sprintf("implement/%d/%d", rec.Rounds["plan"], k+1)
	if sha, found, err := committedStep(ctx, ws, key); err != nil {
		return Outcome{}, err
	} else if found {
		e.Log.Infof("#%d: phase %d is already on the branch (an earlier run stopped before recording it)", ic.n, k+1)
		rec.Phases[k].SHA = sha
		return Outcome{To: workflow.InProgress}, nil
	}
	d, err := e.promptData(ctx, ic, "")
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = e.readBranchFile(ctx, ws, rec.Artifacts["plan"].Path)
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
			e.keepPhase(ctx, ic, rec, ws, k, m, key, be)
		}
		return Outcome{}, err
	}
	head, err := e.commitPhase(ctx, ic, rec, ws, k, m, key)
	if err != nil {
		return Outcome{}, err
	}
	rec.Phases[k].SHA = head
	return Outcome{To: workflow.InProgress}, nil
}

// commitPhase checks the agent's changes of phase k (of m), runs verify, commits them with the phase's key
// and pushes.
func (e *Engine) commitPhase(ctx context.Context, ic *issue, rec *Record, ws *workspace.Workspace, k, m int, key string) (string, error) {
	changes, err := guard(ctx, ws, "implement")
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
	changes, err = guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if err := e.scanSecrets(ws, changes); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph: Phase %d of %d: #%d %s\n\n%s: %s", k+1, m, ic.n, Inert(rec.Phases[k].Title), trailerKey, key)
	head, err := ws.Commit(ctx, msg, e.Author)
	if err != nil {
		return "", fmt.Errorf("committing phase %d: %w", k+1, err)
	}
	e.checkpoint("after-commit")
	if err := push(ctx, ic, ws); err != nil {
		return "", err
	}
	e.checkpoint("after-push")
	return head, nil
}

// selfReview has the agent review the whole branch against the plan before the pull request opens:
// approved, the pr step runs next; sent back, a fix phase with the critique is added (a person is asked
// once max_iterations is reached).
func (e *Engine) selfReview(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	ws, d, err := e.prepare(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	diff, err := ws.Diff(ctx)
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = e.readBranchFile(ctx, ws, rec.Artifacts["plan"].Path)
	d.Diff = truncate(diff, 200000)
	var verdict string
	doc, art, err := e.document(ctx, ic, rec, ws, docStep{
		kind: "self-review", command: "self-review", header: "## Self-Review",
		rel:     artifactPath("reviews", ic, "-self-review"),
		subject: fmt.Sprintf("ralph: self-review for #%d %s", ic.n, Inert(ic.gh.Title)),
		check:   func(doc string) (err error) { verdict, err = ParseVerdict(doc); return err },
	}, d)
	if err != nil {
		return Outcome{}, err
	}
	art.Verdict = verdict
	rec.setArtifact("self-review", art)
	if verdict == "APPROVED" {
		return Outcome{To: workflow.InProgress}, nil
	}
	rec.ReviewIterations++
	if rec.ReviewIterations >= e.Config.MaxIterations {
		return Outcome{Person: &Escalation{
			Before: workflow.InProgress,
			Reason: fmt.Sprintf("The self-review sent the change back %d times (max_iterations: %d).", rec.ReviewIterations, e.Config.MaxIterations),
			Advice: fmt.Sprintf("The branch `%s` holds the work so far. Finish it by hand, or say `/ralph retry` to let ralph try once more.", rec.Branch),
		}}, nil
	}
	rec.Phases = append(rec.Phases, Phase{
		Title: fmt.Sprintf("Address self-review %d", rec.ReviewIterations),
		Text:  fmt.Sprintf("## Phase %d: Address self-review %d\n\nFix every finding of the self-review below.\n\n%s", len(rec.Phases)+1, rec.ReviewIterations, doc),
		Fix:   true,
	})
	return Outcome{To: workflow.InProgress}, nil
}

// pullRequest opens the pull request from the issue's branch (or finds the one a stopped run opened).
func (e *Engine) pullRequest(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	// A run that stopped after opening the pull request left it open: find it before opening one.
	pr, err := e.GitHub.FindPull(ctx, rec.Branch, rec.Base)
	if err != nil {
		return Outcome{}, err
	}
	if pr == nil || pr.State != "open" {
		created, err := e.GitHub.CreatePull(ctx, ghapi.NewPull{
			Title: fmt.Sprintf("%s (#%d)", Inert(ic.gh.Title), ic.n),
			Body:  pullBody(ic.n, ic.gh.Title, *rec),
			Head:  rec.Branch,
			Base:  rec.Base,
			Draft: e.Config.DraftPR,
		})
		if err != nil {
			var ge *ghapi.Error
			if errors.As(err, &ge) && ge.Status == 422 {
				// "A pull request already exists" can be the answer to a repeat of our own create (the
				// client retried a 5xx GitHub gave after opening it): look again before calling it a failure.
				if again, ferr := e.GitHub.FindPull(ctx, rec.Branch, rec.Base); ferr == nil && again != nil && again.State == "open" {
					created, err = *again, nil
				} else {
					return Outcome{}, &StepError{Step: "pr", Reason: "GitHub refused the pull request", Err: err}
				}
			} else {
				return Outcome{}, err
			}
		}
		pr = &created
		e.checkpoint("after-pr")
	}
	rec.PR, rec.PRURL = pr.Number, pr.HTMLURL
	return Outcome{To: workflow.InReview}, nil
}

func pullBody(n int, title string, rec Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Summary\n\nThis pull request resolves #%d, %s, in %d phases planned, reviewed and implemented by ralph.\n\n", n, Inert(title), len(rec.Phases))
	b.WriteString("## Phases\n\n")
	for i, p := range rec.Phases {
		fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, Inert(p.Title), short(p.SHA))
	}
	b.WriteString("\n## Documents\n\n")
	for _, kind := range []string{"research", "plan", "review", "self-review"} {
		a, ok := rec.Artifacts[kind]
		if !ok || a.URL == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s: [`%s`](%s)", documentTitle(kind), Inert(a.Path), link(a.URL))
		if a.Comment != "" {
			fmt.Fprintf(&b, " ([comment](%s))", link(a.Comment))
		}
		b.WriteString("\n")
	}
	// Nothing quoted above can mention, reference or hide; the one closing keyword is ralph's, for this issue.
	return unmarked(b.String()) + fmt.Sprintf("\nCloses #%d\n", n)
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// merge watches the pull request: merged, the issue is Done; closed unmerged, a person is needed; open,
// the issue waits for people.
func (e *Engine) merge(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	var pr *ghapi.PullRequest
	if rec.PR != 0 {
		p, err := e.GitHub.Pull(ctx, rec.PR)
		if err != nil {
			return Outcome{}, err
		}
		pr = &p
	} else {
		p, err := e.GitHub.FindPull(ctx, rec.Branch, rec.Base)
		if err != nil {
			return Outcome{}, err
		}
		pr = p
	}
	switch {
	case pr == nil:
		return Outcome{Person: &Escalation{Before: workflow.InReview,
			Reason: "The issue is In Review but ralph finds no pull request for its branch.",
			Advice: "Open one from the branch, or say `/ralph retry` to let ralph open it again."}}, nil
	case pr.IsMerged():
		rec.PR, rec.PRURL = pr.Number, pr.HTMLURL
		return Outcome{To: workflow.Done}, nil
	case pr.State == "closed":
		return Outcome{Person: &Escalation{Before: workflow.InProgress,
			Reason: fmt.Sprintf("The pull request #%d was closed without being merged.", pr.Number),
			Advice: "Reopen it, or say `/ralph retry` to let ralph work on the branch again."}}, nil
	}
	return Outcome{Wait: &Waiting{Paused: true,
		Message: fmt.Sprintf("#%d is In Review: the pull request %s is open and waits for people", ic.n, rec.PRURL)}}, nil
}

var decisionLine = regexp.MustCompile(`(?m)^\W{0,3}DECISION:\s*\**\s*(research|plan|done|canceled|cancelled|split)\b`)

func (e *Engine) triage(ctx context.Context, ic *issue, rec *Record) (Outcome, error) {
	if ps := rec.Split; ps != nil {
		// A split a person approved (the planner waits until one does): created from ralph's own comment,
		// with no agent.
		return e.approvedSplit(ctx, ic, rec, ps)
	}
	ws, err := e.checkout(ctx, ic)
	if err != nil {
		return Outcome{}, err
	}
	// The decision is not committed: it goes in the agent's TMPDIR.
	abs := filepath.Join(ws.Tmp, "triage.md")
	d, err := e.promptData(ctx, ic, abs)
	if err != nil {
		return Outcome{}, err
	}
	d.Feedback = rec.Feedback // why a person sent the last split back
	if err := e.runAgent(ctx, ic, ws, "triage", abs, 0, 0, d); err != nil {
		return Outcome{}, err
	}
	b, err := ws.TempDocument("triage.md")
	if errors.Is(err, workspace.ErrNoDocument) {
		return Outcome{}, &StepError{Step: "triage", Reason: "the agent did not write its decision at RALPH_ARTIFACT"}
	}
	if err != nil {
		return Outcome{}, documentError("triage", "RALPH_ARTIFACT", err)
	}
	if err := e.refuseLeak("triage", "the triage", string(b)); err != nil {
		return Outcome{}, err
	}
	m := decisionLine.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return Outcome{}, &StepError{Step: "triage", Reason: "the triage has no `DECISION: research|plan|done|canceled` line"}
	}
	decision := m[len(m)-1][1]
	rec.Feedback = ""
	if decision == "split" {
		return e.splitDecided(ctx, ic, rec, string(b))
	}
	to := map[string]workflow.State{"research": workflow.ResearchNeeded, "plan": workflow.ReadyForPlan, "done": workflow.Done, "canceled": workflow.Canceled, "cancelled": workflow.Canceled}[decision]
	if to == workflow.ResearchNeeded && !e.Config.Research {
		to = workflow.ReadyForPlan
	}
	cm, err := e.postTriage(ctx, ic, string(b))
	if err != nil {
		return Outcome{}, err
	}
	rec.setArtifact("triage", Artifact{Comment: cm.HTMLURL, Verdict: string(to)})
	return Outcome{To: to}, nil
}
