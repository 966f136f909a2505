package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Issue is the issue a step is taken on, as the run read it once the step began: a copy, which nothing
// the step does changes. What the step changes of the record it changes on its draft (Step.Do).
type Issue struct {
	N     int
	GH    ghapi.Issue
	Rec   Record
	State workflow.State
}

// Writer is what a step writes to the issue besides its outcome, through the issue's one writer: ralph's
// own comments, sealed and found again by their markers.
type Writer interface {
	// UpsertComment posts the comment marked marker, or edits it when ralph posted it before.
	UpsertComment(ctx context.Context, marker, body string) (ghapi.Comment, error)
	// Comments are the issue's comments as the run read them and the writer wrote them since.
	Comments() []ghapi.Comment
	// Status is ralph's status comment among them, nil until there is one.
	Status() *ghapi.Comment
	// Checkpoint marks a point between two writes (Engine.Checkpoint).
	Checkpoint(name string)
}

// People says whose comments ralph believes: the run's one answerer, which asks GitHub about a login once.
type People interface {
	// Trusted says whether login may drive ralph.
	Trusted(ctx context.Context, login string) (bool, error)
	// Wrote says whether ralph believes what u wrote (ralph's own account, or someone who may drive it).
	Wrote(ctx context.Context, u ghapi.User) (bool, error)
	// OwnComment is the index of the first comment ralph believes for which match holds (-1: none).
	OwnComment(ctx context.Context, comments []ghapi.Comment, match func(body string) bool) (int, error)
	// Find is ralph's record of issue n among its comments, read only from a comment ralph believes.
	Find(ctx context.Context, n int, comments []ghapi.Comment, cfg config.Config) (record.Found, error)
	// ParentOf says which issue is's parent marker names, and which part of it is is, when ralph believes
	// the marker's author (issue n's split).
	ParentOf(ctx context.Context, n int, is ghapi.Issue) (parent, part int, ok bool, err error)
}

// Runner is what a step runs with: the agent's session (the agent in its boundary, the model gateway and
// its budgets) on its copy of the issue's branch; the documents and commits ralph makes of the agent's
// work; and the issue's writer, for the comments a step posts. A step's run function is a method of it.
// The engine makes one per step (NewRunner) and keeps its Work until the outcome is written.
type Runner struct {
	ic          Issue
	cfg         config.Config
	gh          GitHub
	log         Logger
	session     Session
	workspaces  *workspace.Store
	prompts     *prompts.Set
	author      git.Signature
	w           Writer
	people      People
	now         func() time.Time
	recordAhead func(ctx context.Context) error
	table       *Table
	Work
}

// Options are what NewRunner makes a runner of.
type Options struct {
	Issue      Issue
	Step       workflow.Event // "" for a person's command
	Config     config.Config
	GitHub     GitHub
	Log        Logger
	Workspaces *workspace.Store
	Prompts    *prompts.Set
	Author     git.Signature
	Writer     Writer
	People     People
	Now        func() time.Time
	// Session is the step's session, made with the step's work, which the session's notes fill.
	Session func(w *Work) Session
	// Table is the workflow's table (the documents a pull request links).
	Table *Table
	// Ahead records the step's attempt before the agent first starts; if it fails, no agent runs.
	Ahead func(ctx context.Context) error
}

// NewRunner makes the runner of one step.
func NewRunner(o Options) *Runner {
	r := &Runner{ic: o.Issue, cfg: o.Config, gh: o.GitHub, log: o.Log, workspaces: o.Workspaces, prompts: o.Prompts,
		author: o.Author, w: o.Writer, people: o.People, now: o.Now, recordAhead: o.Ahead, table: o.Table, Work: Work{Step: o.Step}}
	r.session = o.Session(&r.Work)
	return r
}

// Issue is the issue the step is taken on, as it stood when the step began.
func (r *Runner) Issue() Issue { return r.ic }

// Session is the step's session.
func (r *Runner) Session() Session { return r.session }

// Close ends the step's work once its outcome is written: it says which of ralph's commits GitHub did not
// verify, and removes the agent's copy and the documents branch's.
func (r *Runner) Close() (unverified []string) {
	for _, ws := range []*workspace.Workspace{r.WS, r.Docs} {
		if ws == nil {
			continue
		}
		for _, u := range ws.Unverified {
			unverified = append(unverified, u.SHA+": "+u.Reason)
			r.log.Warnf("#%d: GitHub did not verify ralph's commit %s (%s)", r.ic.N, u.SHA, u.Reason)
		}
		if err := ws.Close(); err != nil && ws == r.WS {
			r.log.Warnf("#%d: removing the agent's copy: %v", r.ic.N, err)
		}
	}
	return unverified
}

// refuseLeak is the failure of a step whose product (what: "the document", "the triage") holds a
// secret's value, or nil: nothing of it may be committed, pushed or posted.
func (r *Runner) refuseLeak(step, what, text string) error {
	names := r.session.Leaks(text)
	if len(names) == 0 {
		return nil
	}
	return &StepError{Step: step, Reason: fmt.Sprintf("%s holds the value of %s, a secret the agent holds; ralph committed and posted nothing of it", what, strings.Join(names, ", "))}
}

// ExplainTurnLimit adds to a failure that the agent had stopped at its turn limit, when it had: the likely
// reason it did not finish.
func (r *Runner) ExplainTurnLimit(serr *StepError) {
	if r.Usage == nil || !r.Usage.HitTurnLimit || strings.Contains(serr.Reason, "turn limit") {
		return
	}
	serr.Reason += fmt.Sprintf(" (the agent stopped at its turn limit, agent.max_turns: %d; raise it if the step needs more)", r.cfg.Agent.MaxTurns)
}
