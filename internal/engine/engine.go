// Package engine advances one issue by one step. A run is a pipeline of values: read (the issue and ralph's
// record of it, under the issue's lock) → plan (planner.go: which step, or what the issue waits for) → begin
// (the step's lock state) → run (the step, on a draft of the record, with the agent in its boundary when the
// step needs one) → settle (settle.go, pure: the record and the step's Outcome make the new record and the
// writes) → write (notices, labels, the status comment with the record, the state label, the board).
//
// Engine keeps the public verbs (Advance, PullClosed, Enroll, Act with Approve, Reject and Retry, Status,
// NextPrompt) and the run's pipeline; it hands the rest to three parts: the runner (work.go: what a step runs
// with, the agent's session above all, which steps reach through Session (session.go); each step's run
// function is a method of it), the writer (write.go: what a run
// writes to GitHub) and people (author.go: whose word ralph takes). The status read model (view.go) reads an
// issue the way a run does, for gh ralph status.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// GitHub is what the engine needs of GitHub; *ghapi.Client implements it. It is made of the small
// interfaces below, one for each kind of thing the engine reads or writes.
type GitHub interface {
	IssueStore
	LabelStore
	CommentStore
	PullStore
	Relations
	WebLinks
}

// IssueStore reads and creates issues.
type IssueStore interface {
	// IssueWithComments reads an issue with all its comments: a run's one read of it.
	IssueWithComments(ctx context.Context, n int) (ghapi.Issue, []ghapi.Comment, error)
	Issue(ctx context.Context, n int) (ghapi.Issue, error)
	Issues(ctx context.Context, f ghapi.IssueFilter) ([]ghapi.Issue, error)
	CreateIssue(ctx context.Context, ni ghapi.NewIssue) (ghapi.Issue, error)
}

// IssueReaderFor is a GitHub that reads, with an issue and its comments, one person's role on the
// repository in the same request (*ghapi.Client does): the run that enrolls an issue learns whether the
// person who enrolled it may at no extra request. The role is "" when GitHub does not say.
type IssueReaderFor interface {
	IssueWithCommentsFor(ctx context.Context, n int, login string) (ghapi.Issue, []ghapi.Comment, string, error)
}

// LabelStore moves an issue's labels.
type LabelStore interface {
	AddLabels(ctx context.Context, n int, labels ...string) error
	SetLabels(ctx context.Context, n int, labels []string) error
	RemoveLabel(ctx context.Context, n int, label string) error
}

// CommentStore reads and writes an issue's comments (the status comment, documents, notices).
type CommentStore interface {
	Comments(ctx context.Context, n int) ([]ghapi.Comment, error)
	CreateComment(ctx context.Context, n int, body string) (ghapi.Comment, error)
	UpdateComment(ctx context.Context, id int64, body string) (ghapi.Comment, error)
}

// PullStore finds and opens the issue's pull request.
type PullStore interface {
	FindPull(ctx context.Context, head, base string) (*ghapi.PullRequest, error)
	Pull(ctx context.Context, n int) (ghapi.PullRequest, error)
	CreatePull(ctx context.Context, p ghapi.NewPull) (ghapi.PullRequest, error)
}

// Relations are sub-issues and what blocks an issue.
type Relations interface {
	SubIssues(ctx context.Context, n int) ([]ghapi.Issue, error)
	AddSubIssue(ctx context.Context, n int, childID int64) error
	AddBlockedBy(ctx context.Context, n int, blockerID int64) error
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
}

// WebLinks are the web addresses of files and branches, for comments.
type WebLinks interface {
	BlobURL(branch, path string) string
	TreeURL(branch string) string
}

// Locker serializes runs on one issue. Acquire returns a *HeldError when another run holds the issue.
type Locker interface {
	Acquire(ctx context.Context, issue int) (Lease, error)
}

// Lease is a held lock.
type Lease interface {
	// Release gives the lock up (if this run still holds it).
	Release(ctx context.Context) error
	// TookOver names the stale holder this run took the lock from, and why; "" when the lock was free.
	TookOver() string
	// Lost is closed when another run took the lock over (this run's lease had expired).
	Lost() <-chan struct{}
}

// HeldError says another run holds the issue.
type HeldError struct{ Holder string }

func (e *HeldError) Error() string { return "issue is held by " + e.Holder }

// Unlocked takes no lock. It is right only where something else runs one ralph at a time per issue, such as
// the per-issue `concurrency:` group of the workflow that runs the Action.
type Unlocked struct{}

// Acquire always succeeds.
func (Unlocked) Acquire(context.Context, int) (Lease, error) { return noLease{}, nil }

type noLease struct{}

func (noLease) Release(context.Context) error { return nil }
func (noLease) TookOver() string              { return "" }
func (noLease) Lost() <-chan struct{}         { return nil }

// Authorizer decides whether a person may drive ralph (enroll, approve, reject, retry).
type Authorizer interface {
	Authorize(ctx context.Context, login string) (bool, error)
}

// Logger is where the engine reports progress: the Action's log (with groups) or a terminal.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	// Untrusted starts a section for output that is not ralph's (the agent's, a verify command's), and
	// returns where that output goes and the function that ends the section. In the Actions log no
	// workflow command printed inside it takes effect.
	Untrusted(title string) (io.Writer, func())
}

// Origin says who is running: an Actions run, or a person's terminal.
type Origin struct {
	URL   string // the Actions run's page, when there is one
	Label string // "Actions run 1234" or "gh ralph on host (pid 99)"
}

// Engine advances issues of one repository.
type Engine struct {
	GitHub GitHub
	// Workspaces is ralph's own repository, from which each step's agent gets its copy and to which
	// ralph alone commits.
	Workspaces *workspace.Store
	// Sandbox is the boundary the agent and the verify commands run in (its Writable are extra places,
	// the step's copy, HOME and TMPDIR are added).
	Sandbox sandbox.Config
	Agent   agent.Runner
	// AgentErr is why no agent can be run (a preset this build lacks); a step that needs the agent then
	// fails before it changes anything.
	AgentErr error
	Config   config.Config
	Prompts  *prompts.Set
	Lock     Locker
	Auth     Authorizer
	// Identity asks GitHub which account ralph's token writes as (see author.go; ActionsBot needs no
	// asking); nil: never asked.
	Identity func(ctx context.Context) (string, error)
	Log      Logger
	// Origin says who is running: an Actions run, or a person's terminal.
	Origin Origin
	Author git.Signature
	// Signing says whether ralph's commits will be signed (a ruleset may require it).
	Signing Signing
	// AgentEnv is the environment the agent starts from; credentials are removed from it with Secrets.
	// With the model gateway on, it is also where ralph finds the model key the gateway holds.
	AgentEnv []string
	Secrets  []string
	// ModelTransport is how ralph's model gateway reaches the vendor (proxies, CA bundle); nil: Go's
	// default transport.
	ModelTransport http.RoundTripper
	// Ledger keeps what the repository spent on the model today, across runs, for budget.day.
	Ledger Ledger
	// NewSession, when set, is the agent's session for a step on issue n in place of the one the engine
	// builds from the fields above (session.New): a test's scripted session.
	NewSession func(n int) Session
	Now        func() time.Time
	DryRun     bool
	// Checkpoint, when set, is called between the writes of a step (after-commit, after-push,
	// after-comment, after-pr, after-sub-issue, after-status, after-label); the end-to-end tests stop the
	// process there.
	Checkpoint func(name string)
	// OnState, when set, is told of every state change after the labels have moved (a project board
	// mirrors it). Its error is logged as a warning: it never fails or undoes a step.
	OnState func(ctx context.Context, issueNodeID string, n int, to workflow.State) error
	// Labeler, when set, is asked before a step whether ralph:build on the issue counts for nobody (Unowned),
	// so that the status comment the step writes says the issue waits for a writer instead of that ralph
	// goes on by itself. gh ralph advance sets it: no chain follows its step, a sweep must. Its error is
	// logged as a warning.
	Labeler func(ctx context.Context, is ghapi.Issue) (unowned bool, who string, err error)

	// steps is the workflow's table, built by New from the steps' declarations.
	steps *table
}

// table is the engine's table of steps, the one New built: an Engine that takes steps is built by New.
func (e *Engine) table() *table { return e.steps }

// Ledger keeps what the repository spends on the model per UTC day, across runs (budget.day); the agent's
// session reads and adds to it.
type Ledger = session.Ledger

// ErrNotEnrolled: ralph holds no record of the issue and it does not carry ralph:build (a state label
// alone enrolls nothing).
var ErrNotEnrolled = errors.New("issue is not enrolled: add the ralph:build label")

// InputError is bad input from a person: a missing issue, a pull request, a command that does not apply.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}
