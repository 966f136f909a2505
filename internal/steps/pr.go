package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The pr step: ralph opens the pull request from the branch.

func pullRequestStep() Step {
	return Step{Name: workflow.PR, From: workflow.InProgress, Running: workflow.InProgress,
		To: []workflow.State{workflow.InReview}, Agent: Never, Do: (*Runner).pullRequest,
		Retry: func(rec *Record, _ config.Config) {
			if rec.Fix != nil {
				return // a fix round's pull request stays (the fix step's Retry)
			}
			if rec.PR == 0 {
				return
			}
			rec.PR, rec.PRURL = 0, "" // the closed pull request is not reused
			if a, ok := rec.Artifacts[selfReviewDocument.Kind]; ok {
				a.Verdict = "" // the branch is reviewed again before a new pull request opens
				rec.Artifacts[selfReviewDocument.Kind] = a
			}
		},
		Check: func(rec Record, _ config.Config) []CheckItem {
			items := []CheckItem{{rec.PR != 0, "Pull request"}}
			if n := rec.ReviewRounds + rec.CIFixes; n > 0 {
				answered := rec.Fix == nil && (rec.State == workflow.InReview || rec.State == workflow.Done)
				items = append(items, CheckItem{answered, fmt.Sprintf("Review and checks answered (%s)", plural(n, "round", "rounds"))})
			}
			return items
		}}
}

// pullRequest opens the pull request from the branch (or finds the one a stopped run opened).
func (r *Runner) pullRequest(ctx context.Context, rec *Record) (Outcome, error) {
	if rec.Fix != nil && rec.PR != 0 {
		// A fix round answers the pull request it was started on, which the record names: no look needed
		// (a pull request closed meanwhile is the pull_request event's to handle).
		if err := r.answerFix(ctx, rec); err != nil {
			return Outcome{}, err
		}
		rec.Fix = nil
		return Outcome{To: workflow.InReview}, nil
	}
	// A run that stopped after opening the pull request left it open: find it before opening one.
	pr, err := r.gh.FindPull(ctx, rec.Branch, rec.Base)
	if err != nil {
		return Outcome{}, err
	}
	if pr == nil || pr.State != "open" {
		created, err := r.gh.CreatePull(ctx, ghapi.NewPull{
			Title: fmt.Sprintf("%s (#%d)", Inert(r.ic.GH.Title), r.ic.N),
			Body:  pullBody(r.ic.N, r.ic.GH.Title, *rec, r.table.Documents()),
			Head:  rec.Branch,
			Base:  rec.Base,
			Draft: r.cfg.DraftPR,
		})
		if err != nil {
			var ge *ghapi.Error
			if errors.As(err, &ge) && ge.Status == 422 {
				// "A pull request already exists" can be the answer to a repeat of our own create (the
				// client retried a 5xx GitHub gave after opening it): look again before calling it a failure.
				if again, ferr := r.gh.FindPull(ctx, rec.Branch, rec.Base); ferr == nil && again != nil && again.State == "open" {
					created, err = *again, nil
				} else {
					return Outcome{}, &StepError{Step: "pr", Reason: "GitHub refused the pull request", Err: err}
				}
			} else {
				return Outcome{}, err
			}
		}
		pr = &created
		r.w.Checkpoint("after-pr")
		// GitHub starts no pull_request workflow for a pull request the Actions token opened: no check runs
		// on it, so there is none for ralph to answer either; the status comment says so, and what to do.
		rec.ChecksBlocked = created.User.Login == ActionsBot
	}
	rec.PR, rec.PRURL = pr.Number, pr.HTMLURL
	if rec.Fix != nil {
		if err := r.answerFix(ctx, rec); err != nil {
			return Outcome{}, err
		}
		rec.Fix = nil
	}
	return Outcome{To: workflow.InReview}, nil
}

func pullBody(n int, title string, rec Record, docs []Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Summary\n\nThis pull request resolves #%d, %s, in %s planned, reviewed and implemented by ralph.\n\n", n, Inert(title), plural(len(rec.Phases), "phase", "phases"))
	b.WriteString("## Phases\n\n")
	for i, p := range rec.Phases {
		fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, Inert(p.Title), short(p.SHA))
	}
	b.WriteString("\n## Documents\n\n")
	if rec.Docs != "" {
		fmt.Fprintf(&b, "Kept out of this pull request, on ralph's branch %s:\n\n", ownCode(rec.Docs))
	}
	for _, doc := range docs {
		a, ok := rec.Artifacts[doc.Kind]
		if !ok || a.URL == "" {
			continue // the documents that are files on the branch: the triage is a comment
		}
		fmt.Fprintf(&b, "- %s: [%s](%s)", doc.Title, ownCode(a.Path), link(a.URL))
		if a.Comment != "" {
			fmt.Fprintf(&b, " ([comment](%s))", link(a.Comment))
		}
		b.WriteString("\n")
	}
	// Nothing quoted above can mention, reference or hide; the one closing keyword is ralph's, for this issue.
	return record.FitBody(unmarked(b.String())) + fmt.Sprintf("\nCloses #%d\n", n)
}
