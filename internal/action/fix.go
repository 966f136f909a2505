package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// fixIssue hands a fix trigger for issue n to the engine: the person (trig.Actor, whose write access the
// engine checks for a review or a comment), their text (trig.Reason, data), and the cause (trig.Fix: the
// pull request, branch, commit, review, check suite or run the event names, which the engine checks
// against its record). The fix is a step of its own: it records the fix phase, and the chain's next run
// implements it (one step a run keeps each within its request budget).
func fixIssue(ctx context.Context, eng *engine.Engine, n int, trig Trigger) (engine.Result, error) {
	req := engine.FixRequest{Cause: engine.FixComment, Text: trig.Reason}
	if f := trig.Fix; f != nil {
		req.Cause, req.Pull, req.HeadSHA = f.Cause, f.Pull, f.HeadSHA
	}
	res, err := eng.Fix(ctx, n, trig.Actor, req)
	var input *engine.InputError
	if errors.As(err, &input) && req.Cause != engine.FixComment {
		// An event, not a person's command: a review or checks that leave ralph nothing to fix (checks of
		// a commit that is not ralph's last, an issue not In Review) end the run quietly.
		return engine.Result{Issue: n, Message: "nothing to fix: " + input.Error()}, nil
	}
	return res, err
}

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
