package steps

import (
	"context"
	"fmt"
	"regexp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The security review step (security_review: true, off by default): once the branch is done and
// self-reviewed, the agent reviews its diff for security before the pull request opens. PASS: the pr step
// runs next. FINDINGS: a fix phase with the findings goes back to implementation, as a self-review's
// send-back does; the send-backs of both reviews count against max_iterations together, and the next one
// goes to a person.

// SecurityReview is the security review step's event.
const SecurityReview workflow.Event = "security-review"

var securityDocument = Document{Kind: "security-review", Title: "Security review", Header: "## Security Review", Folder: "reviews", Suffix: "-security-review"}

func securityReviewStep() Step {
	return Step{Name: SecurityReview, From: workflow.InProgress, Running: workflow.InProgress,
		Guard: Guard{"security review due", securityReviewDue}, To: []workflow.State{workflow.InProgress}, Agent: Always,
		Doc: &securityDocument, Do: (*Runner).securityReview,
		Retry: func(rec *Record, _ config.Config) {
			if rec.Fix == nil && rec.PR != 0 {
				clearVerdict(rec, securityDocument.Kind) // a new pull request's branch is reviewed again
			}
		},
		Check: func(rec Record, c config.Config) []CheckItem {
			if !c.SecurityReview {
				return nil
			}
			return []CheckItem{{rec.PR != 0 || rec.Artifacts[securityDocument.Kind].Verdict == "PASS", "Security review"}}
		}}
}

// securityReviewDue: security_review is on and the last security review (if any) did not pass the branch.
// The rows before it (implement, self-review) take the issue while a phase is left or the self-review is due.
func securityReviewDue(rec Record, c config.Config) bool {
	return c.SecurityReview && rec.Artifacts[securityDocument.Kind].Verdict != "PASS"
}

var securityVerdictLine = regexp.MustCompile(`(?m)^\W{0,3}VERDICT:\s*\**\s*(PASS|FINDINGS)\b`)

// parseSecurityVerdict is the last verdict line of a security review: PASS or FINDINGS.
func parseSecurityVerdict(doc string) (string, error) {
	return lastVerdict(securityVerdictLine, doc, "the security review has no `VERDICT: PASS` or `VERDICT: FINDINGS` line")
}

// clearVerdict forgets the verdict of document kind, so that its step runs again.
func clearVerdict(rec *Record, kind string) {
	if a, ok := rec.Artifacts[kind]; ok {
		a.Verdict = ""
		rec.Artifacts[kind] = a
	}
}

// securityReview has the agent review the branch's diff for security before the pull request opens.
func (r *Runner) securityReview(ctx context.Context, rec *Record) (Outcome, error) {
	art, err := r.reviewBranch(ctx, rec, securityDocument, parseSecurityVerdict)
	if err != nil {
		return Outcome{}, err
	}
	if art.Verdict == "PASS" {
		return Outcome{To: workflow.InProgress}, nil
	}
	rec.ReviewIterations++
	if rec.ReviewIterations >= r.cfg.MaxIterations || len(rec.Phases) >= record.MaxPhasesKept {
		return Outcome{Person: &Escalation{
			Before: workflow.InProgress,
			Reason: fmt.Sprintf("The security review found problems in the branch (%s); the reviews of the branch sent it back %d times (max_iterations: %d), or it has the most phases ralph keeps.", art.Path, rec.ReviewIterations, r.cfg.MaxIterations),
			Advice: fmt.Sprintf("Read the findings, fix them on the branch `%s` by hand, or say `/ralph retry` to let ralph try once more.", rec.Branch),
		}}, nil
	}
	addReviewFix(rec, "security review", art)
	return Outcome{To: workflow.InProgress}, nil
}
