// Package engine advances one issue by one step. A run is a pipeline of values: lock → read (the issue and
// ralph's record of it, read.go) → plan (the planner, internal/steps: which step, or what the issue waits
// for) → begin (the step's lock state) → run (the step, internal/steps, on a snapshot of the issue and a
// draft of the record, with the agent in its boundary when the step needs one) → settle (settle.go, pure:
// the record and the step's Outcome make the new record and the writes) → write (write.go: notices, labels,
// the status comment with the record, the state label, the board).
//
// The issue a run holds (issue.go) is a value: each stage that changes it returns the issue it made, and
// the run goes on with that one; the writer keeps only its cache of what GitHub holds (the comments, ralph's
// status comment, the labels).
//
// Engine keeps the one door both doors ask through (Handle) and the run's pipeline. What it hands a step
// is the step's runner (runner.go: the agent's session, session.go, the copies, the issue's snapshot), the
// issue's one writer (issue.go, for ralph's own comments) and the run's people (author.go: whose word
// ralph takes).
package engine

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// GitHub is what the engine needs of GitHub (steps.GitHub; *ghapi.Client implements it), and the small
// interfaces it is made of.
type (
	GitHub       = steps.GitHub
	IssueStore   = steps.IssueStore
	LabelStore   = steps.LabelStore
	CommentStore = steps.CommentStore
	PullStore    = steps.PullStore
	Relations    = steps.Relations
	WebLinks     = steps.WebLinks
	// IssueReaderFor reads an issue with one person's role (steps.IssueReaderFor).
	IssueReaderFor = steps.IssueReaderFor
)

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

// acquire takes issue n's lock (a *HeldError when another run holds it); release gives it up, warning
// when that fails.
func (e *Engine) acquire(ctx context.Context, n int) (lease Lease, release func(), err error) {
	if lease, err = e.Lock.Acquire(ctx, n); err != nil {
		return nil, nil, err
	}
	return lease, func() {
		if rerr := lease.Release(context.WithoutCancel(ctx)); rerr != nil {
			e.Log.Warnf("releasing the lock on #%d: %v", n, rerr)
		}
	}, nil
}

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

// Logger is where the engine reports progress (steps.Logger).
type Logger = steps.Logger

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

// InputError is bad input from a person (steps.InputError).
type InputError = steps.InputError

func inputErrorf(format string, args ...any) error { return steps.InputErrorf(format, args...) }

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}
