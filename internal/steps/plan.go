package steps

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The plan step: the agent writes the plan, whose "## Phase N:" sections are the implement step's phases.

var planDocument = Document{Kind: "plan", Title: "Plan", Header: "## Implementation Plan", Folder: "plans"}

func planStep() Step {
	return Step{Name: workflow.Plan, From: workflow.ReadyForPlan, Running: workflow.PlanInProgress,
		To: []workflow.State{workflow.PlanInReview}, Agent: Always,
		Doc: &planDocument, Do: (*Runner).plan,
		Retry: func(rec *Record, c config.Config) {
			if rec.PlanIterations >= c.MaxIterations {
				rec.PlanIterations = 0 // a person decided to let ralph plan again
			}
		},
		Check: func(rec Record, c config.Config) []CheckItem {
			text := "Plan"
			if rec.PlanIterations > 0 {
				text = fmt.Sprintf("Plan (sent back %d of %d times)", rec.PlanIterations, c.MaxIterations)
			}
			return []CheckItem{{Has(rec, workflow.Plan), text}}
		}}
}

func (r *Runner) plan(ctx context.Context, rec *Record) (Outcome, error) {
	ws, d, err := r.Prepare(ctx)
	if err != nil {
		return Outcome{}, err
	}
	rel := planDocument.path(r.ic.N, *rec)
	d.Research = r.readBranchFile(ctx, ws, rec.Artifacts[researchDocument.Kind].Path)
	d.Feedback = rec.Feedback
	if d.Feedback != "" {
		d.Plan = r.readBranchFile(ctx, ws, rel)
	}
	var phases []Phase
	_, art, err := r.WriteDocument(ctx, rec, ws, planDocument.Step(r.ic, func(doc string) (err error) { phases, err = plantext.ParsePhases(doc); return err }), d)
	if err != nil {
		return Outcome{}, err
	}
	rec.SetArtifact(planDocument.Kind, art)
	if why := plantext.CheckPhases(phases, r.cfg.MaxPhases); why != "" {
		// Each phase is a run of the agent, a commit and a line of the record: a plan with too many goes to
		// a person before any runs.
		return Outcome{Person: &Escalation{
			Before: workflow.ReadyForPlan,
			Reason: why,
			Advice: fmt.Sprintf("Read the plan above. Make the issue smaller (or split it), or raise `max_phases` in .github/ralph.yml, then say `/ralph retry` (or run `gh ralph retry %d`) to plan again.", r.ic.N),
		}}, nil
	}
	for i := range phases {
		phases[i].Text = "" // the plan file holds it; the record stays small
	}
	rec.Phases = phases
	return Outcome{To: workflow.PlanInReview, Labels: map[string]bool{workflow.LabelNeedsIteration: false}}, nil
}
