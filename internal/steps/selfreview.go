package steps

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// The self-review step: the agent reviews the whole branch before the pull request opens.

var selfReviewDocument = Document{Kind: "self-review", Title: "Self-review", Header: "## Self-Review", Folder: "reviews", Suffix: "-self-review"}

func selfReviewStep() Step {
	return Step{Name: workflow.SelfReview, From: workflow.InProgress, Running: workflow.InProgress,
		Guard: Guard{"self-review due", selfReviewDue}, To: []workflow.State{workflow.InProgress}, Agent: Always,
		Doc: &selfReviewDocument, Do: (*Runner).selfReview,
		Retry: func(rec *Record, c config.Config) {
			if rec.ReviewIterations >= c.MaxIterations {
				rec.ReviewIterations = 0
			}
		},
		Check: func(rec Record, c config.Config) []CheckItem {
			if !c.SelfReview {
				return nil
			}
			return []CheckItem{{rec.PR != 0 || rec.Artifacts[selfReviewDocument.Kind].Verdict == "APPROVED", "Self-review"}}
		}}
}

// selfReviewDue: every phase is done and the last self-review (if any) did not approve them.
func selfReviewDue(rec Record, c config.Config) bool {
	return c.SelfReview && rec.Artifacts[selfReviewDocument.Kind].Verdict != "APPROVED"
}

// selfReview has the agent review the whole branch against the plan before the pull request opens:
// approved, the pr step runs next; sent back, a fix phase with the critique is added (a person is asked
// once max_iterations is reached).
func (r *Runner) selfReview(ctx context.Context, rec *Record) (Outcome, error) {
	art, err := r.reviewBranch(ctx, rec, selfReviewDocument, ParseVerdict)
	if err != nil {
		return Outcome{}, err
	}
	if art.Verdict == "APPROVED" {
		return Outcome{To: workflow.InProgress}, nil
	}
	rec.ReviewIterations++
	if rec.ReviewIterations >= r.cfg.MaxIterations {
		return Outcome{Person: &Escalation{
			Before: workflow.InProgress,
			Reason: fmt.Sprintf("The self-review sent the change back %d times (max_iterations: %d).", rec.ReviewIterations, r.cfg.MaxIterations),
			Advice: fmt.Sprintf("The branch `%s` holds the work so far. Finish it by hand, or say `/ralph retry` to let ralph try once more.", rec.Branch),
		}}, nil
	}
	if len(rec.Phases) >= record.MaxPhasesKept {
		return Outcome{Person: &Escalation{
			Before: workflow.InProgress,
			Reason: fmt.Sprintf("The issue has %d phases, the most ralph keeps for one issue.", len(rec.Phases)),
			Advice: fmt.Sprintf("The branch `%s` holds the work so far. Finish it by hand.", rec.Branch),
		}}, nil
	}
	addReviewFix(rec, "self-review", art)
	return Outcome{To: workflow.InProgress}, nil
}

// reviewBranch has the agent review the branch's whole diff against the plan and write doc, whose verdict
// parse reads; the document is recorded with its verdict. The self-review and the security review share it.
func (r *Runner) reviewBranch(ctx context.Context, rec *Record, doc Document, parse func(string) (string, error)) (Artifact, error) {
	ws, d, err := r.Prepare(ctx)
	if err != nil {
		return Artifact{}, err
	}
	diff, err := ws.Diff(ctx)
	if err != nil {
		return Artifact{}, err
	}
	d.Plan = r.readBranchFile(ctx, ws, rec.Artifacts[planDocument.Kind].Path)
	d.Diff = truncate(diff, 200000)
	return r.writeVerdict(ctx, rec, ws, doc, parse, d)
}

// writeVerdict has the agent write doc, which is taken only with a verdict that parse reads, and records
// the document with its verdict. The plan review and the reviews of the branch write theirs so.
func (r *Runner) writeVerdict(ctx context.Context, rec *Record, ws *workspace.Workspace, doc Document, parse func(string) (string, error), d prompts.Data) (Artifact, error) {
	var verdict string
	_, art, err := r.WriteDocument(ctx, rec, ws, doc.Step(r.ic, func(text string) (err error) { verdict, err = parse(text); return err }), d)
	if err != nil {
		return Artifact{}, err
	}
	art.Verdict = verdict
	rec.SetArtifact(doc.Kind, art)
	return art, nil
}

// addReviewFix adds the fix phase for a review's findings (what: "self-review", "security review"). The
// findings stay in the review's document on the branch: the phase reads them from there.
func addReviewFix(rec *Record, what string, art Artifact) {
	rec.Phases = append(rec.Phases, Phase{
		Title: fmt.Sprintf("Address %s %d", what, rec.ReviewIterations),
		Text:  fmt.Sprintf("## Phase %d: Address %s %d\n\nFix every finding of the %s below (%s on the branch).", len(rec.Phases)+1, what, rec.ReviewIterations, what, art.Path),
		Fix:   true,
		Doc:   art.Path,
	})
}
