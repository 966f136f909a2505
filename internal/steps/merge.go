package steps

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The merge step: ralph watches the pull request it opened until people merge or close it.

func mergeStep() Step {
	return Step{Name: workflow.Merge, From: workflow.InReview,
		To: []workflow.State{workflow.Done, workflow.HumanNeeded}, Agent: Never, Do: (*Runner).merge,
		Waits: func(Record, config.Config) Wait { return WaitPullRequest },
		Check: func(rec Record, _ config.Config) []CheckItem {
			return []CheckItem{{rec.State == workflow.Done, "Merged"}}
		}}
}

// merge watches the pull request: merged, the issue is Done; closed unmerged, a person is needed; open,
// the issue waits for people.
func (r *Runner) merge(ctx context.Context, rec *Record) (Outcome, error) {
	var pr *ghapi.PullRequest
	if rec.PR != 0 {
		p, err := r.gh.Pull(ctx, rec.PR)
		if err != nil {
			return Outcome{}, err
		}
		pr = &p
	} else {
		p, err := r.gh.FindPull(ctx, rec.Branch, rec.Base)
		if err != nil {
			return Outcome{}, err
		}
		pr = p
	}
	switch {
	case pr == nil:
		return Outcome{Person: &Escalation{Before: workflow.InReview,
			Reason: "The issue is In Review but ralph finds no pull request for its branch.",
			Advice: "Open one from the branch, or say `/ralph retry` to let ralph open it again."}}, nil
	case pr.IsMerged():
		rec.PR, rec.PRURL = pr.Number, pr.HTMLURL
		return Outcome{To: workflow.Done}, nil
	case pr.State == "closed":
		return Outcome{Person: &Escalation{Before: workflow.InProgress,
			Reason: fmt.Sprintf("The pull request #%d was closed without being merged.", pr.Number),
			Advice: "Reopen it, or say `/ralph retry` to let ralph work on the branch again."}}, nil
	}
	return Outcome{Wait: &Waiting{Paused: true,
		Message: fmt.Sprintf("#%d is In Review: the pull request %s is open and waits for people", r.ic.N, rec.PRURL)}}, nil
}
