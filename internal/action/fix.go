package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// resolveFixPull finds the issue of a `/ralph fix` comment made on a pull request, whose payload does not
// name the pull request's branch: the pull request must come from a ralph branch of this repository. Like
// every fix, it then goes to the engine, which checks that the pull request is the one its record names.
// why says why there is nothing to do.
func resolveFixPull(ctx context.Context, gh *ghapi.Client, branchPrefix string, trig *Trigger) (why string, err error) {
	pr, err := gh.Pull(ctx, trig.Fix.Pull)
	if errors.Is(err, ghapi.ErrNotFound) {
		return fmt.Sprintf("#%d is not a pull request of this repository", trig.Fix.Pull), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading pull request #%d: %w", trig.Fix.Pull, err)
	}
	full := gh.Owner() + "/" + gh.Repo()
	if pr.Head.Repo == nil || pr.Head.Repo.FullName != full {
		return fmt.Sprintf("pull request #%d comes from another repository; ralph's come from its own branches", pr.Number), nil
	}
	n := branchIssue(pr.Head.Ref, branchPrefix)
	if n == 0 {
		return fmt.Sprintf("pull request #%d is not from a ralph branch (%sN-…)", pr.Number, branchPrefix), nil
	}
	trig.Issues = []int{n}
	trig.Fix.Head = pr.Head.Ref
	return "", nil
}
