package steps

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// The triage step: the agent decides what the issue needs (research, a plan, nothing, or a split into
// sub-issues); its decision is posted as a comment, not committed.

var triageDocument = Document{Kind: "triage", Title: "Triage"}

func triageStep() Step {
	return Step{Name: workflow.Triage, From: workflow.Backlog,
		To:    []workflow.State{workflow.ResearchNeeded, workflow.ReadyForPlan, workflow.Done, workflow.Canceled, workflow.InProgress},
		Agent: Always, Doc: &triageDocument, Do: (*Runner).triage,
		Waits: func(rec Record, _ config.Config) Wait {
			if rec.Split != nil && rec.Split.ApprovedBy == "" {
				return WaitSplit
			}
			return NoWait
		},
		Check: func(rec Record, c config.Config) []CheckItem {
			if !c.Triage {
				return nil
			}
			return []CheckItem{{Has(rec, workflow.Triage), "Triage"}}
		}}
}

var decisionLine = regexp.MustCompile(`(?m)^\W{0,3}DECISION:\s*\**\s*(research|plan|done|canceled|cancelled|split)\b`)

func (r *Runner) triage(ctx context.Context, rec *Record) (Outcome, error) {
	if ps := rec.Split; ps != nil {
		// A split a person approved (the planner waits until one does): created from ralph's own comment,
		// with no agent.
		return r.approvedSplit(ctx, rec, ps)
	}
	// A run that posted the triage and then could not record it (GitHub failed, the run was killed) is
	// finished by another: it goes on from the decision ralph posted, without asking the agent again, whose
	// second answer could differ from the first (and leave the parts of a first split behind).
	if doc, ok, err := r.postedTriage(ctx); err != nil || ok {
		if err != nil {
			return Outcome{}, err
		}
		r.log.Infof("#%d: the triage was posted by an earlier run that did not record it; going on from its decision", r.ic.N)
		return r.triageDecided(ctx, rec, doc)
	}
	ws, err := r.checkout(ctx)
	if err != nil {
		return Outcome{}, err
	}
	// The decision is not committed: it goes in the agent's TMPDIR.
	abs := filepath.Join(ws.Tmp, "triage.md")
	d, err := r.PromptData(ctx, abs)
	if err != nil {
		return Outcome{}, err
	}
	d.Feedback = rec.Feedback // why a person sent the last split back
	if err := r.runAgent(ctx, ws, "triage", abs, 0, 0, d); err != nil {
		return Outcome{}, err
	}
	b, err := ws.TempDocument("triage.md")
	if errors.Is(err, workspace.ErrNoDocument) {
		return Outcome{}, &StepError{Step: "triage", Reason: "the agent did not write its decision at RALPH_ARTIFACT"}
	}
	if err != nil {
		return Outcome{}, documentError("triage", "RALPH_ARTIFACT", err)
	}
	if err := r.refuseLeak("triage", "the triage", string(b)); err != nil {
		return Outcome{}, err
	}
	return r.triageDecided(ctx, rec, string(b))
}

// triageDecided carries out the triage document's decision.
func (r *Runner) triageDecided(ctx context.Context, rec *Record, b string) (Outcome, error) {
	m := decisionLine.FindAllStringSubmatch(b, -1)
	if len(m) == 0 {
		return Outcome{}, &StepError{Step: "triage", Reason: "the triage has no `DECISION: research|plan|done|canceled` line"}
	}
	decision := m[len(m)-1][1]
	rec.Feedback = ""
	if decision == "split" {
		return r.splitDecided(ctx, rec, b)
	}
	to := map[string]workflow.State{"research": workflow.ResearchNeeded, "plan": workflow.ReadyForPlan, "done": workflow.Done, "canceled": workflow.Canceled, "cancelled": workflow.Canceled}[decision]
	if to == workflow.ResearchNeeded && !r.cfg.Research {
		to = workflow.ReadyForPlan
	}
	cm, err := r.postTriage(ctx, b)
	if err != nil {
		return Outcome{}, err
	}
	rec.SetArtifact(triageDocument.Kind, Artifact{Comment: cm.HTMLURL, Verdict: string(to)})
	return Outcome{To: to}, nil
}
