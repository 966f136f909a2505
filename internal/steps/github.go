package steps

import (
	"context"
	"io"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// GitHub is what ralph needs of GitHub; *ghapi.Client implements it. It is made of the small
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

// Logger is where the engine reports progress: the Action's log (with groups) or a terminal.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	// Untrusted starts a section for output that is not ralph's (the agent's, a verify command's), and
	// returns where that output goes and the function that ends the section. In the Actions log no
	// workflow command printed inside it takes effect.
	Untrusted(title string) (io.Writer, func())
}

// RuleReader is a GitHub that reads the repository rules (rulesets) that apply to a branch; *ghapi.Client
// does. With one, a step that runs the agent and pushes to the issue's branch first reads that branch's rules
// and stops, before it changes anything, where one would refuse its work.
type RuleReader interface {
	BranchRules(ctx context.Context, branch string) ([]ghapi.Rule, error)
}

// ActionsBot is the account the Actions token (GITHUB_TOKEN) writes as. Only the repository's own workflows
// hold that token, and only people with write access change them, so what it wrote counts as ralph's.
const ActionsBot = "github-actions[bot]"
