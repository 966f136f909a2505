package compose

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// publisher has GitHub make ralph's commits (workspace.Publisher): GitHub signs a commit made through its
// API with no author, committer or signature, so ralph's commits are Verified and meet a ruleset requiring
// signed commits. It moves only ralph's branches (under prefix), as git.Repo pushes only them.
type publisher struct {
	gh     *ghapi.Client
	prefix string
}

var _ workspace.Publisher = publisher{}

func (p publisher) Publish(ctx context.Context, message, tree string, parents []string) (workspace.Published, error) {
	gc, err := p.gh.CreateCommit(ctx, message, tree, parents)
	if err != nil {
		return workspace.Published{}, err
	}
	v := gc.Verification
	return workspace.Published{SHA: gc.SHA, Verified: v.Verified, Reason: v.Reason, Payload: v.Payload, Signature: v.Signature}, nil
}

func (p publisher) MoveBranch(ctx context.Context, branch, sha, old string) error {
	if p.prefix == "" || !strings.HasPrefix(branch, p.prefix) || len(branch) == len(p.prefix) {
		return &git.DestinationError{Ref: "refs/heads/" + branch, Reason: fmt.Sprintf("it is not under the branch prefix %q", p.prefix)}
	}
	var err error
	if old == "" {
		err = p.gh.CreateRef(ctx, "refs/heads/"+branch, sha)
	} else {
		err = p.gh.UpdateRef(ctx, "heads/"+branch, sha, false)
	}
	if err != nil {
		// A move that went through though its answer was lost (or a repeat of one that did): the branch is
		// already where it was to go.
		if r, rerr := p.gh.GetRef(ctx, "heads/"+branch); rerr == nil && r.Object.SHA == sha {
			return nil
		}
	}
	var ge *ghapi.Error
	if errors.As(err, &ge) && ge.Status == http.StatusUnprocessableEntity {
		rej := &git.PushRejectedError{Branch: branch, Reason: ge.Message}
		if strings.Contains(ge.Message, "Repository rule violations") {
			// GitHub's answer lists each rule on a line of its own ("- Commits must have verified signatures.").
			for _, line := range strings.Split(ge.Message, "\n") {
				if r, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
					rej.Rules = append(rej.Rules, r)
				}
			}
			if len(rej.Rules) == 0 {
				rej.Rules = []string{ge.Message}
			}
		}
		return rej
	}
	return err
}
