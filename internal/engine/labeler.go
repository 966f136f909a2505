package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// LabelerReader is what Unowned needs of GitHub; *ghapi.Client implements it.
type LabelerReader interface {
	LabeledBy(ctx context.Context, n int, label string) (string, error)
}

// Unowned says whether ralph:build on issue is counts for nobody, as a sweep counts it: its last adder may
// not drive ralph (or no event says who added it), so no sweep takes the issue until a writer's enroll, or
// the label added again by one. who is the adder; auth says who may drive ralph (nil: anyone). trusted
// remembers the logins asked about (nil: none). One request for the issue's events, and one per login not
// yet asked about.
func Unowned(ctx context.Context, gh LabelerReader, auth Authorizer, is ghapi.Issue, trusted map[string]bool) (unowned bool, who string, err error) {
	if auth == nil {
		return false, "", nil
	}
	who, err = gh.LabeledBy(ctx, is.Number, workflow.LabelBuild)
	if err != nil {
		return false, "", fmt.Errorf("reading who added %s to #%d: %w", workflow.LabelBuild, is.Number, err)
	}
	switch {
	case who == "":
		return true, "", nil
	case who == ActionsBot && plantext.RalphsSubIssue(is.Body, is.User.Login, ActionsBot):
		// A sub-issue ralph's split created and enrolled: its parent's enroller was checked.
		return false, who, nil
	}
	ok, seen := trusted[who]
	if !seen {
		if ok, err = auth.Authorize(ctx, who); err != nil {
			return false, who, fmt.Errorf("checking the permission of @%s, who added %s to #%d: %w", who, workflow.LabelBuild, is.Number, err)
		}
		if trusted != nil {
			trusted[who] = ok
		}
	}
	return !ok, who, nil
}
