package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// ActionsBot is the account the Actions token writes as (steps.ActionsBot).
const ActionsBot = steps.ActionsBot

// Anyone who can comment on an issue can post a comment that starts with ralph's markers. What ralph reads
// back from a comment (the record, above all: state, phase, branch, counts) is believed only when ralph
// wrote the comment, or someone with write access did, and ralph edits no other comment. Who wrote a comment
// comes with the comments ralph lists anyway, so the check costs no request in the usual case:
//
//   - ActionsBot: ralph's own account with the Actions token, no request;
//   - a person: someone with write access (the permission check ralph makes of people, once per login and
//     run) — the user of a personal access token ralph runs with is one;
//   - another bot: one allowed_bots lets drive ralph, or the account of ralph's own token (a GitHub App's
//     token writes as "<app>[bot]"), which ralph asks GitHub for once per run (Engine.Identity), and only
//     when it meets such a comment.

// Action is what a door asks of the engine (a Request's kind): a person's action (ActEnroll, ActApprove,
// ActReject, ActRetry, ActFix), or a run's (ActAdvance, ActMerge, ActStatus, ActFinish). It is the engine's
// own vocabulary, the one both doors use; a person's action is recorded as the workflow's event of the
// same name (Action.Event).
type Action string

// The person's actions.
const (
	ActEnroll  Action = "enroll"
	ActApprove Action = "approve"
	ActReject  Action = "reject"
	ActRetry   Action = "retry"
	// ActFix is a person's (or the checks') request for a fix.
	ActFix Action = "fix"
)

// Event is the workflow's event a person's action a is recorded as (the same name).
func (a Action) Event() workflow.Event { return workflow.Event(a) }

// RefusedError: the person may not do this; a polite comment said so.
type RefusedError struct {
	Login  string
	Action Action
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("@%s may not %s: write, maintain or admin permission is needed", e.Login, e.Action)
}

// people says who may drive ralph, and whose comments ralph believes: the one place a run asks. A run
// makes one (Engine.people) when it reads its issue, and everything of the run asks it (the reader, the
// runner, the writer, a sub-issue's record): it keeps every answer it had, so GitHub is asked about a
// login once per run.
type people struct {
	auth Authorizer // nil: everyone may
	// identity asks GitHub which account ralph's token writes as (nil: never asked).
	identity func(ctx context.Context) (string, error)
	log      Logger
	// gh and dryRun are for the one comment a refusal posts.
	gh     CommentStore
	dryRun bool
	// answers are whether each login this run asked about may drive ralph.
	answers map[string]bool
}

func (e *Engine) people() *people {
	return &people{auth: e.Auth, identity: e.Identity, log: e.Log, gh: e.GitHub, dryRun: e.DryRun, answers: map[string]bool{}}
}

// vouch records that login may drive ralph, known without asking (GitHub named their role): it is not
// asked about again in this run.
func (p *people) vouch(login string) { p.answers[login] = true }

// authorize checks a person's permission to act, and keeps the answer: a person who may is not asked about
// again in this run. A refusal posts one polite comment and returns *RefusedError.
func (p *people) authorize(ctx context.Context, n int, login string, act Action) error {
	ok, err := p.Trusted(ctx, login)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	if !p.dryRun {
		body := fmt.Sprintf("Thanks, @%s! Only people with write, maintain or admin permission on this repository can %s ralph's work on an issue, so nothing was done. A maintainer can do it for you.", login, act)
		if _, err := p.gh.CreateComment(ctx, n, body); err != nil {
			return err
		}
	}
	return &RefusedError{Login: login, Action: act}
}

// Trusted says whether login may drive ralph, asking GitHub once per login and run.
func (p *people) Trusted(ctx context.Context, login string) (bool, error) {
	if p.auth == nil {
		return true, nil
	}
	if ok, seen := p.answers[login]; seen {
		return ok, nil
	}
	ok, err := p.auth.Authorize(ctx, login)
	if err != nil {
		return false, fmt.Errorf("checking the permission of @%s: %w", login, err)
	}
	p.answers[login] = ok
	return ok, nil
}

// Wrote says whether u's comment counts as ralph's: WroteRecord with this run's answers.
func (p *people) Wrote(ctx context.Context, u ghapi.User) (bool, error) {
	return WroteRecord(ctx, u, p.Trusted, p.identity)
}

// WroteRecord says whether a comment by u counts as ralph's (see above). may says whether a login may drive
// ralph (people with write access, bots in allowed_bots; an Authorizer's Authorize); identity, when not nil,
// gives the account of ralph's token.
func WroteRecord(ctx context.Context, u ghapi.User, may func(ctx context.Context, login string) (bool, error), identity func(ctx context.Context) (string, error)) (bool, error) {
	switch {
	case u.Login == "":
		return false, nil
	case u.Login == ActionsBot:
		return true, nil
	}
	ok, err := may(ctx, u.Login)
	if err != nil || ok || !u.IsBot() || identity == nil {
		return ok, err
	}
	me, err := identity(ctx)
	if err != nil {
		return false, fmt.Errorf("asking GitHub which account ralph's token is: %w", err)
	}
	return strings.EqualFold(u.Login, me), nil
}

// OwnComment finds the first comment of ralph's whose body satisfies match; comments by others that match
// are passed over (and reported once, by Find, for the status marker).
func (p *people) OwnComment(ctx context.Context, comments []ghapi.Comment, match func(body string) bool) (int, error) {
	for i, c := range comments {
		if !match(c.Body) {
			continue
		}
		ok, err := p.Wrote(ctx, c.User)
		if err != nil {
			return -1, err
		}
		if ok {
			return i, nil
		}
	}
	return -1, nil
}

// Find is record.Find over issue n's comments, with this run's word on who wrote what; the comments Find passes
// over are named in the log: ralph neither believes nor edits those.
func (p *people) Find(ctx context.Context, n int, comments []ghapi.Comment, cfg config.Config) (record.Found, error) {
	f, err := record.Find(ctx, comments, cfg, isStep, p.Wrote)
	for _, c := range f.Ignored {
		p.log.Warnf("#%d: ignoring the comment by @%s that starts with ralph's status marker (%s): only ralph and people with write access write ralph's record", n, c.User.Login, c.HTMLURL)
	}
	return f, err
}

// OnceIdentity asks who at most once (until it answers): a token's account does not change during a run.
func OnceIdentity(ask func(ctx context.Context) (string, error)) func(ctx context.Context) (string, error) {
	var (
		mu    sync.Mutex
		login string
	)
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if login != "" {
			return login, nil
		}
		l, err := ask(ctx)
		if err == nil {
			login = l
		}
		return l, err
	}
}

// PermissionAuthorizer allows people with write, maintain or admin permission on the repository.
type PermissionAuthorizer struct {
	Permission func(ctx context.Context, login string) (string, error)
	// AllowedBots may drive ralph although they are bots.
	AllowedBots []string
}

// Authorize implements Authorizer.
func (a PermissionAuthorizer) Authorize(ctx context.Context, login string) (bool, error) {
	if strings.HasSuffix(login, "[bot]") {
		// A bot has no collaborator permission of its own: the config's allowed_bots is the whole answer.
		return slices.Contains(a.AllowedBots, login), nil
	}
	p, err := a.Permission(ctx, login)
	if err != nil {
		return false, err
	}
	switch p {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}

// ParentOf is the parent and part of is when ralph split it off: its body ends with ralph's marker and it
// was opened by ralph (or by someone with write access, whose word ralph takes as its own). Anyone can open
// an issue whose body ends with a marker.
func (p *people) ParentOf(ctx context.Context, n int, is ghapi.Issue) (parent, part int, ok bool, err error) {
	parent, part, ok = plantext.ParseParent(is.Body)
	if !ok {
		return 0, 0, false, nil
	}
	own, err := p.Wrote(ctx, is.User)
	if err != nil {
		return 0, 0, false, fmt.Errorf("checking who opened #%d: %w", is.Number, err)
	}
	if !own {
		p.log.Warnf("#%d: ignoring the parent marker in #%d, opened by @%s: only ralph marks its sub-issues", n, is.Number, is.User.Login)
		return 0, 0, false, nil
	}
	return parent, part, true, nil
}
