package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Step is one step of ralph's workflow, declared once in its own file (research.go, plan.go, …) with its run function
// beside it: the state it runs from, the state while it runs, a named guard, the states it may move the
// issue to, whether it runs the agent, its document, whether it is phased. The legal transitions
// (workflow.Table) are derived from the declarations, and the engine's table is built from them by New. A
// run takes one step: the planner (planner.go) picks the row, the engine (internal/engine) moves the issue into the row's
// Running state, calls Do on a draft of the record, and settles the Outcome it returns (the engine's settle), which
// refuses a move outside To. Everything that lists steps or documents (the status comment's checklist and
// links, the pull request's body, gh ralph status, the planner's waits) reads the rows.
//
// Adding a step is one file, <name>.go, that declares its row and defines its Do (and, when it runs the
// agent, one template, internal/prompts/templates/<command>.md); the row is then named once in steps.go,
// where its place among the rows says which step an issue takes first.
type Step struct {
	Name workflow.Event
	// From is the state the step starts from.
	From workflow.State
	// Running is the state while the step runs (its lock state, shown by the label); "" when the issue
	// stays in From.
	Running workflow.State
	// Guard, when set, must hold of the record for the step to be the one From calls for (several steps
	// start from In Progress); the first row whose From and Guard match is the step. Its name is drawn
	// in the workflow's diagram.
	Guard Guard
	// To are the states the step may move the issue to; settle refuses any other.
	To []workflow.State
	// Agent says whether the step runs the agent under config c.
	Agent func(c config.Config) bool
	// Person says whether, under config c, the step is a person's to take: the issue waits for them.
	Person func(c config.Config) bool
	// Waits, when set, is what the issue waits for before ralph takes the step (NoWait: nothing).
	Waits func(rec Record, c config.Config) Wait
	// Phased: the step works through the plan's phases, one a run.
	Phased bool
	// Doc is the document the step writes (nil: none).
	Doc *Document
	// Describe, when set, says what a completed step did ("" or nil: "<step>: <from> → <to>").
	Describe func(from, to workflow.State, rec Record) string
	// Retry, when set, clears what a person's retry back to From lets the step do again.
	Retry func(rec *Record, c config.Config)
	// Help, when set, is what a person can do while the step is next (the status comment's "What you can
	// do"), where the issue waits for nobody.
	Help func(n int) string
	// Check is what the step shows in the status comment's checklist (nil: nothing).
	Check func(rec Record, c config.Config) []CheckItem
	// Do does the step's work and says what came of it. rec is the step's draft of the record: what the
	// step changes of it counts once settled (the engine's settle), and not at all when the step fails.
	Do func(r *Runner, ctx context.Context, rec *Record) (Outcome, error)
}

// Guard is a named condition on the record and the config: the name is what the workflow's diagram shows.
type Guard struct {
	Name  string
	Holds func(rec Record, c config.Config) bool
}

// holds says whether the guard lets the step run (no guard: Always).
func (g Guard) holds(rec Record, c config.Config) bool { return g.Holds == nil || g.Holds(rec, c) }

// declaration is what the workflow knows of the step.
func (s Step) declaration() workflow.Declaration {
	return workflow.Declaration{Event: s.Name, From: s.From, Running: s.Running, Guard: s.Guard.Name, To: s.To}
}

// May says whether the step may move the issue to s.
func (s Step) May(to workflow.State) bool { return slices.Contains(s.To, to) }

// Document is the kind of document a step writes: its place in the record's artifacts, its comment, its
// file on the issue's branch.
type Document struct {
	// Kind is the record's artifact key, the step's key in commits and comments, and the agent's command.
	Kind string
	// Title names the document in links and commit subjects.
	Title string
	// Header is the first line of the document's comment.
	Header string
	// Folder is where the file lives, under thoughts/shared/ on the issue's branch ("": no file; the
	// document is a comment only); Suffix ends its name.
	Folder, Suffix string
}

// path is where the document of issue n lives on its branch.
func (d Document) path(n int, rec Record) string {
	return fmt.Sprintf("thoughts/shared/%s/%s-GH-%04d-%s%s.md", d.Folder, rec.Date, n, rec.Slug, d.Suffix)
}

// subject is the subject of the document's commit.
func (d Document) subject(n int, title string) string {
	return fmt.Sprintf("ralph: %s for #%d %s", strings.ToLower(d.Title), n, Inert(title))
}

// Always and Never say whether a step runs the agent whatever the config (Step.Agent).
func Always(config.Config) bool { return true }
func Never(config.Config) bool  { return false }

// Table is the workflow's steps, in the order the planner tries them, and the legal moves derived from
// them and from the commands' declarations. New builds it; everything of the engine that lists steps reads it.
type Table struct {
	steps []Step
	Flow  workflow.Table
}

// Steps are the table's rows, in the order the planner tries them.
func (t *Table) Steps() []Step { return t.steps }

// NewTable is the table of rows, with the moves of commands (people's and enrolling) besides.
func NewTable(rows []Step, commands []workflow.Declaration) *Table {
	decls := slices.Clone(commands[:1]) // enrolling comes first, as an issue meets it
	for _, r := range rows {
		decls = append(decls, r.declaration())
	}
	decls = append(decls, commands[1:]...)
	return &Table{steps: rows, Flow: workflow.NewTable(decls)}
}

// from is the step an issue in state s takes under its record and config c: the first matching row
// whose From (or, for a lock state, Running) is s. running says s is the step's lock state.
func (t *Table) from(s workflow.State, rec Record, c config.Config) (st *Step, running bool) {
	for i := range t.steps {
		r := &t.steps[i]
		if r.From != s || !r.Guard.holds(rec, c) {
			continue
		}
		return r, false
	}
	for i := range t.steps {
		if r := &t.steps[i]; r.Running == s && r.Running != r.From {
			return r, true
		}
	}
	return nil, false
}

// Named is the row of step ev (the first, for children); nil when ev is no step.
func (t *Table) Named(ev workflow.Event) *Step {
	for i := range t.steps {
		if t.steps[i].Name == ev {
			return &t.steps[i]
		}
	}
	return nil
}

// Running is the state an issue is in while step ev runs ("" when it stays where it was).
func (t *Table) Running(ev workflow.Event) workflow.State {
	if st := t.Named(ev); st != nil {
		return st.Running
	}
	return ""
}

// RestartState is the state a step starts from: for a lock state (a taken-over or failed step), the
// waiting state of the step that holds it.
func (t *Table) RestartState(s workflow.State) workflow.State {
	for _, r := range t.steps {
		if r.Running == s && r.Running != r.From {
			return r.From
		}
	}
	return s
}

// Documents are the kinds of document the steps write, in the workflow's order.
func (t *Table) Documents() []Document {
	var out []Document
	for _, r := range t.steps {
		if r.Doc != nil && (len(out) == 0 || out[len(out)-1].Kind != r.Doc.Kind) {
			out = append(out, *r.Doc)
		}
	}
	return out
}

// Describe says what a completed step ev did.
func (t *Table) Describe(ev workflow.Event, from, to workflow.State, rec Record) string {
	for _, r := range t.steps {
		if r.Name != ev || r.Describe == nil {
			continue
		}
		if msg := r.Describe(from, to, rec); msg != "" {
			return msg
		}
	}
	if from == to {
		return fmt.Sprintf("%s done; still %s", ev, to.Title())
	}
	return fmt.Sprintf("%s: %s → %s", ev, from.Title(), to.Title())
}

// CheckItem is a line of the status comment's checklist: a step done or not, as its row names it.
type CheckItem struct {
	Done bool
	Text string
}

// checklist is the status comment's list of steps, each as its row shows itself.
func (t *Table) checklist(rec Record, cfg config.Config) []CheckItem {
	var items []CheckItem
	for _, r := range t.steps {
		if r.Check != nil {
			items = append(items, r.Check(rec, cfg)...)
		}
	}
	return items
}

// Has says whether the record holds a completed step ev.
func Has(rec Record, ev workflow.Event) bool {
	for _, d := range rec.Steps {
		if d.Step == ev {
			return true
		}
	}
	return false
}

// planApproved: the plan is past its review.
func planApproved(rec Record) bool {
	return rec.State == workflow.InProgress || rec.State == workflow.InReview || rec.State == workflow.Done
}

// Wait is what an issue waits for when no step of ralph's can move it now.
type Wait int

const (
	// NoWait: a step of ralph's can run now.
	NoWait Wait = iota
	// WaitPerson: Human Needed; only a person's retry moves it.
	WaitPerson
	// WaitApproval: a plan waits for a person's review (review: interactive).
	WaitApproval
	// WaitPullRequest: the pull request is open for people; the merge step finds it merged or closed.
	WaitPullRequest
	// WaitSubIssues: a parent follows its sub-issues; the children step mirrors them.
	WaitSubIssues
	// WaitBlockers: issues that block this one are still open.
	WaitBlockers
	// WaitReopen: the issue is closed; reopening it lets it go on.
	WaitReopen
	// Finished: Done or Canceled.
	Finished
	// WaitSplit: the triage's split waits for a person's approval before any sub-issue is created
	// (split.approve); the issue stays in Backlog.
	WaitSplit
	// WaitWriter: a step of ralph's could run, but ralph:build was added by someone who may not drive
	// ralph (Facts.Unowned), so no sweep takes the issue: a writer's gh ralph enroll N, or the label added
	// again by one, does.
	WaitWriter
)
