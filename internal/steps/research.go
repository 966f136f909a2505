package steps

import (
	"context"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The research step: the agent researches the issue and writes a document; ralph commits and posts it.

var researchDocument = Document{Kind: "research", Title: "Research", Header: "## Research Document", Folder: "research"}

func researchStep() Step {
	return Step{Name: workflow.Research, From: workflow.ResearchNeeded, Running: workflow.ResearchInProgress,
		To: []workflow.State{workflow.ReadyForPlan}, Agent: Always,
		Doc: &researchDocument, Do: (*Runner).research,
		Check: func(rec Record, c config.Config) []CheckItem {
			if !c.Research {
				return nil
			}
			return []CheckItem{{Has(rec, workflow.Research), "Research"}}
		}}
}

func (r *Runner) research(ctx context.Context, rec *Record) (Outcome, error) {
	ws, d, err := r.Prepare(ctx)
	if err != nil {
		return Outcome{}, err
	}
	_, art, err := r.WriteDocument(ctx, rec, ws, researchDocument.Step(r.ic, nil), d)
	if err != nil {
		return Outcome{}, err
	}
	rec.SetArtifact(researchDocument.Kind, art)
	return Outcome{To: workflow.ReadyForPlan}, nil
}
