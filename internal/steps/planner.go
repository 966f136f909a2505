package steps

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Facts are what the planner knows of an issue besides ralph's record and the config.
type Facts struct {
	// Closed: the issue is closed.
	Closed bool
	// Blockers are the open issues that block it, once read; nil: not read (the plan says when they
	// matter, see Decision.AskBlockers).
	Blockers []int
	// Unowned: ralph:build was last added by someone who may not drive ralph (Labeler; "" when no event
	// says who), so no sweep takes the issue. Only a reader that asked GitHub (Unowned) sets it.
	Unowned bool
	Labeler string
}

// Decision is what happens next to an issue: the one decision that the engine, dry runs, gh ralph status,
// sweeps and the status comment's "What you can do" all read.
type Decision struct {
	N     int
	State workflow.State // where the issue is (for one not enrolled yet, where enrolling puts it)
	// Enroll: the issue carries ralph:build and ralph holds no record of it; the run enrolls it first.
	Enroll bool
	// Step is the step the next run takes (nil: none). With a Wait it is the step that watches what the
	// issue waits for (merge watches the pull request, children the sub-issues).
	Step *Step
	// Running: the issue is in the step's lock state (a run is taking the step, or one stopped mid-step
	// and the next run redoes it).
	Running bool
	Wait    Wait
	// Phase and Phases: the implement step's phase (1-based) and how many there are; Title is its title.
	Phase, Phases int
	PhaseTitle    string
	// AskBlockers: the issue is a sub-issue about to take its first step; what blocks it must be read
	// (Facts.Blockers) before it may.
	AskBlockers bool
	Blockers    []int
	// SplitParts: the sub-issues a split that waits for approval would create.
	SplitParts int
	// Reason is why a person is needed (Human Needed).
	Reason string
	Before workflow.State
	config config.Config
	// Labeler is who added ralph:build when the issue waits for a writer (WaitWriter); "" when no event
	// says who.
	Labeler string
}

// Next plans what happens to issue n with record rec (rec.State "" when ralph holds none; enrolled then
// says whether ralph:build is on it) under config c.
func (t *Table) Next(n int, rec Record, enrolled bool, f Facts, c config.Config) Decision {
	p := t.plan(n, rec, enrolled, f, c)
	if f.Unowned && p.State != "" && p.Wait == NoWait && p.Step != nil && !p.Running {
		p.Wait, p.Labeler = WaitWriter, f.Labeler
	}
	return p
}

// plan is next before it looks at who added ralph:build (Facts.Unowned).
func (t *Table) plan(n int, rec Record, enrolled bool, f Facts, c config.Config) Decision {
	p := Decision{N: n, State: rec.State, Reason: rec.Reason, Before: rec.Before, config: c}
	if p.State == "" {
		if !enrolled {
			return p
		}
		p.Enroll, p.State = true, FirstState(c)
	}
	if f.Closed && p.State.Kind() != workflow.Terminal && p.State != workflow.InReview {
		p.Wait = WaitReopen
		return p
	}
	switch p.State {
	case workflow.HumanNeeded:
		p.Wait = WaitPerson
		return p
	case workflow.Done, workflow.Canceled:
		p.Wait = Finished
		return p
	}
	p.Step, p.Running = t.from(p.State, rec, c)
	if p.Step == nil {
		return p
	}
	if p.Step.Waits != nil {
		p.Wait = p.Step.Waits(rec, c)
	}
	switch {
	case p.Wait == WaitSplit:
		p.SplitParts = rec.Split.Parts
	case p.Wait == NoWait && p.Step.Person != nil && p.Step.Person(c):
		p.Wait = WaitApproval
	case p.Step.Phased:
		p.Phase, _ = rec.PhasesLeft()
		p.Phase++
		p.Phases = len(rec.Phases)
		p.PhaseTitle = rec.Phases[p.Phase-1].Title
	}
	// A sub-issue of a split waits for the parts that block it, before its first step only.
	if rec.Parent != 0 && len(rec.Steps) == 0 && p.State.Kind() == workflow.Waiting && p.State != workflow.InProgress {
		if f.Blockers == nil {
			p.AskBlockers = true
		} else if len(f.Blockers) > 0 {
			p.Blockers, p.Wait = f.Blockers, WaitBlockers
		}
	}
	return p
}

// Now says whether a run can take a step right away.
func (p Decision) Now() bool { return p.Step != nil && p.Wait == NoWait && !p.AskBlockers }

// Takes says whether a run takes the step now: a step of ralph's with nothing to wait for, or the step that
// watches what the issue waits for (merge, the pull request; children, the sub-issues).
func (p Decision) Takes() bool {
	switch p.Wait {
	case NoWait, WaitPullRequest, WaitSubIssues:
		return p.Step != nil && !p.AskBlockers
	}
	return false
}

// Paused says whether the issue waits for people: a person, or pull requests in review (its own, or, for
// a parent In Review, its sub-issues').
func (p Decision) Paused() bool {
	switch p.Wait {
	case WaitPerson, WaitApproval, WaitSplit, WaitPullRequest:
		return true
	case WaitSubIssues:
		return p.State == workflow.InReview
	}
	return false
}

// Message is the one line a run that takes no step says about the issue.
func (p Decision) Message() string {
	n := p.N
	switch p.Wait {
	case WaitReopen:
		return fmt.Sprintf("#%d is closed; nothing to do (reopen it to go on)", n)
	case WaitPerson:
		return fmt.Sprintf("#%d needs a person: %s Say `/ralph retry` when it can go on.", n, p.Reason)
	case WaitApproval:
		return fmt.Sprintf("#%d waits for a person to review the plan: `/ralph approve` or `/ralph reject <why>`", n)
	case WaitSplit:
		return fmt.Sprintf("#%d waits for a person to approve its split into %d sub-issues: `/ralph approve` or `/ralph reject <why>`", n, p.SplitParts)
	case WaitBlockers:
		return fmt.Sprintf("#%d waits: it is blocked by %s", n, issueList(p.Blockers))
	case Finished:
		if p.State == workflow.Done {
			return fmt.Sprintf("#%d is done", n)
		}
		return fmt.Sprintf("#%d was canceled", n)
	}
	if p.Step == nil {
		return fmt.Sprintf("#%d is %s; nothing to do", n, p.State.Title())
	}
	return fmt.Sprintf("would run %s on #%d (%s)", p.Step.Name, n, p.State.Title())
}

// Describe says what happens next and who does it, as gh ralph status prints it.
func (p Decision) Describe() string {
	n := p.N
	switch {
	case p.State == "":
		return "nothing: the issue is not enrolled (add the ralph:build label)"
	case p.Wait == WaitWriter:
		return fmt.Sprintf("a person with write access: %s, so no sweep takes it; gh ralph enroll %d adds the label again as theirs (or they add it again), or gh ralph advance %d runs the step now", p.unownedWhy(func(s string) string { return s }), n, n)
	case p.Enroll:
		return fmt.Sprintf("enrollment: the next run puts it in %s (gh ralph advance %d)", p.State.Title(), n)
	}
	switch p.Wait {
	case WaitPerson:
		return fmt.Sprintf("a person: fix what the issue's last ralph comment says, then gh ralph retry %d", n)
	case Finished:
		return "nothing: the issue is " + p.State.Title()
	case WaitReopen:
		return "nothing: the issue is closed (reopen it to go on)"
	case WaitPullRequest:
		return "people: review and merge the pull request (the merge step then marks the issue Done)"
	case WaitApproval:
		return fmt.Sprintf("a person: read the plan, then gh ralph approve %d or gh ralph reject %d --reason …", n, n)
	case WaitSplit:
		return fmt.Sprintf("a person: read the triage's split into %d sub-issues, then gh ralph approve %d (creates them) or gh ralph reject %d --reason … (triages again)", p.SplitParts, n, n)
	case WaitSubIssues:
		return fmt.Sprintf("its sub-issues: the parent moves when they do (children: gh ralph advance %d)", n)
	case WaitBlockers:
		return fmt.Sprintf("the issues that block it: %s", issueList(p.Blockers))
	}
	if p.Step == nil {
		return "nothing: the issue is " + p.State.Title()
	}
	if p.Running {
		return fmt.Sprintf("%s is running (or a run stopped mid-step; the next advance redoes it): gh ralph advance %d", p.Step.Name, n)
	}
	if p.Step.Phased {
		return fmt.Sprintf("implement phase %d of %d (%s): gh ralph advance %d", p.Phase, p.Phases, p.PhaseTitle, n)
	}
	return fmt.Sprintf("%s: gh ralph advance %d", p.Step.Name, n)
}

// Short is the few words of gh ralph status's pipeline: who or what moves the issue next.
func (p Decision) Short() string {
	switch {
	case p.State == "":
		return "nothing"
	case p.Wait == WaitWriter:
		return "a writer (enroll)"
	case p.Enroll:
		return "enroll"
	}
	switch p.Wait {
	case WaitPerson:
		return "a person (retry)"
	case WaitApproval, WaitSplit:
		return "a person (approve or reject)"
	case WaitPullRequest:
		return "merge the pull request"
	case WaitSubIssues:
		return "its sub-issues"
	case WaitBlockers:
		return "blocked"
	case NoWait:
		switch {
		case p.Step == nil:
		case p.Running:
			return "running"
		default:
			return string(p.Step.Name)
		}
	}
	return "nothing"
}

// Actions is the status comment's "What you can do".
func (p Decision) Actions() string {
	n := p.N
	switch p.Wait {
	case WaitPerson:
		return fmt.Sprintf("Fix what is described above, then comment `/ralph retry` (or run `gh ralph retry %d`) to go back to %s.", n, p.Before.Title())
	case WaitApproval:
		return fmt.Sprintf("Read the plan, then comment `/ralph approve` or `/ralph reject <why>` (or `gh ralph approve %d` / `gh ralph reject %d --reason …`).", n, n)
	case WaitSplit:
		return fmt.Sprintf("Read the triage above: it splits this issue into %d sub-issues, and none is created yet. Comment `/ralph approve` to create them, or `/ralph reject <why>` to have the issue triaged again (or `gh ralph approve %d` / `gh ralph reject %d --reason …`).", p.SplitParts, n, n)
	case WaitPullRequest:
		return "Review and merge the pull request. Closing it without merging hands the issue back to a person."
	case WaitWriter:
		return fmt.Sprintf("ralph waits: %s, so ralph's sweeps pass this issue over. Someone with write access runs `gh ralph enroll %d` (or takes the label off and adds it again) to have ralph take it from there, or `gh ralph advance %d` to run the next step now.", p.unownedWhy(inert.Code), n, n)
	case Finished:
		if p.State == workflow.Done {
			return "Nothing: the work is merged."
		}
		return "Nothing: the issue was canceled."
	}
	if p.Step != nil && p.Step.Help != nil {
		return p.Step.Help(n)
	}
	return fmt.Sprintf("Nothing: ralph takes the next step on its own. Comment `/ralph status` to refresh this comment, or run `gh ralph advance %d` to run the next step now.", n)
}

// unownedWhy says who added ralph:build to an issue that waits for a writer (WaitWriter), code marking
// names (in a comment, a code span: a login there is written as itself, and notifies no one).
func (p Decision) unownedWhy(code func(string) string) string {
	if p.Labeler == "" {
		return fmt.Sprintf("no event says who added %s", code(workflow.LabelBuild))
	}
	return fmt.Sprintf("%s was added by %s, who may not drive ralph", code(workflow.LabelBuild), code("@"+p.Labeler))
}

func issueList(ns []int) string {
	parts := make([]string, len(ns))
	for i, b := range ns {
		parts[i] = "#" + strconv.Itoa(b)
	}
	return strings.Join(parts, ", ")
}

// FirstState is where enrollment puts an issue under config c.
func FirstState(c config.Config) workflow.State {
	switch {
	case c.Triage:
		return workflow.Backlog
	case c.Research:
		return workflow.ResearchNeeded
	}
	return workflow.ReadyForPlan
}
