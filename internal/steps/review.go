package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The review step: the agent (review: auto), a person (review: interactive) or nobody (review: skip) reviews
// the plan; approved, the issue goes to In Progress; sent back, to another plan.

var ReviewDocument = Document{Kind: "review", Title: "Plan review", Header: "## Plan Review", Folder: "reviews"}

func reviewStep() Step {
	return Step{Name: workflow.Review, From: workflow.PlanInReview,
		To:     []workflow.State{workflow.InProgress, workflow.ReadyForPlan, workflow.HumanNeeded},
		Agent:  func(c config.Config) bool { return c.Review != config.ReviewSkip },
		Person: func(c config.Config) bool { return c.Review == config.ReviewInteractive },
		// A skipped review writes no document (see review).
		Doc: &ReviewDocument, Do: (*Runner).review,
		Help: func(int) string {
			return "Nothing: ralph reviews the plan next. You can still comment `/ralph reject <why>` to send it back."
		},
		Check: func(rec Record, c config.Config) []CheckItem {
			return []CheckItem{{planApproved(rec), fmt.Sprintf("Plan review (%s)", c.Review)}}
		}}
}

var verdictLine = regexp.MustCompile(`(?m)^\W{0,3}VERDICT:\s*\**\s*(APPROVED|NEEDS_ITERATION)\b`)

// ParseVerdict finds the review's verdict line; the last one counts.
func ParseVerdict(doc string) (string, error) {
	return lastVerdict(verdictLine, doc, "the review has no `VERDICT: APPROVED` or `VERDICT: NEEDS_ITERATION` line")
}

// lastVerdict is the verdict the last line of doc that line matches names (its first group); missing is
// the error when no line does. The plan review, the self-review and the security review read theirs so.
func lastVerdict(line *regexp.Regexp, doc, missing string) (string, error) {
	m := line.FindAllStringSubmatch(doc, -1)
	if len(m) == 0 {
		return "", errors.New(missing)
	}
	return m[len(m)-1][1], nil
}

func (r *Runner) review(ctx context.Context, rec *Record) (Outcome, error) {
	if r.cfg.Review == config.ReviewSkip {
		rec.SetArtifact(ReviewDocument.Kind, Artifact{Verdict: "APPROVED (review: skip)"})
		return Outcome{To: workflow.InProgress}, nil
	}
	ws, d, err := r.Prepare(ctx)
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = r.readBranchFile(ctx, ws, rec.Artifacts[planDocument.Kind].Path)
	art, err := r.writeVerdict(ctx, rec, ws, ReviewDocument, ParseVerdict, d)
	if err != nil {
		return Outcome{}, err
	}
	if art.Verdict == "APPROVED" {
		rec.Feedback = ""
		return Outcome{To: workflow.InProgress}, nil
	}
	return r.SendBack(r.ic.N, rec, "the plan review: "+art.Comment, "The plan review sent the plan back"), nil
}

// SendBack returns a plan for another iteration, or to a person once max_iterations is reached.
func (r *Runner) SendBack(n int, rec *Record, feedback, who string) Outcome {
	rec.PlanIterations++
	rec.Feedback = feedback
	if rec.PlanIterations >= r.cfg.MaxIterations {
		return Outcome{Person: &Escalation{
			Before: workflow.ReadyForPlan,
			Reason: fmt.Sprintf("%s %d times (max_iterations: %d).", who, rec.PlanIterations, r.cfg.MaxIterations),
			Advice: fmt.Sprintf("Edit the issue to make it clearer, or plan it yourself, then say `/ralph retry` (or run `gh ralph retry %d`) to plan again.", n),
		}}
	}
	return Outcome{To: workflow.ReadyForPlan, Labels: map[string]bool{workflow.LabelNeedsIteration: true}}
}
