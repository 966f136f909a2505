package engine

import (
	"context"
	"slices"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// A throwaway step, defined here the way a step of ralph's is defined in its own file of internal/steps: its row beside
// its run function. It proves that a step is one file (and one line of the table): the planner takes it,
// the agent writes its document, ralph commits and posts it, settle records it, and the status comment,
// gh ralph status and the pull request's body list it, with no other edit. It is In Review's step while
// the issue has no probe document, so it runs once, between the pr step and the merge step.

const probeEvent = workflow.Event("probe")

var probeDocument = steps.Document{Kind: "probe", Title: "Probe", Header: "## Probe", Folder: "probes"}

func probeStep() steps.Step {
	return steps.Step{Name: probeEvent, From: workflow.InReview, Agent: steps.Always, Doc: &probeDocument,
		Guard: Guard{Name: "no probe yet", Holds: func(rec Record, _ config.Config) bool { return rec.Artifacts[probeDocument.Kind].Path == "" }},
		Describe: func(from, to workflow.State, rec Record) string {
			return "probe: wrote " + rec.Artifacts[probeDocument.Kind].Path
		},
		Check: func(rec Record, _ config.Config) []steps.CheckItem {
			return []steps.CheckItem{{Done: steps.Has(rec, probeEvent), Text: "Probe"}}
		},
		Do: probe}
}

func probe(r *steps.Runner, ctx context.Context, rec *Record) (Outcome, error) {
	ws, d, err := r.Prepare(ctx)
	if err != nil {
		return Outcome{}, err
	}
	st := probeDocument.Step(r.Issue(), nil)
	// This build has no template probe.md (a real step adds internal/prompts/templates/<kind>.md): the
	// probe borrows the review's.
	st.Command = "review"
	_, art, err := r.WriteDocument(ctx, rec, ws, st, d)
	if err != nil {
		return Outcome{}, err
	}
	rec.SetArtifact(probeDocument.Kind, art)
	return Outcome{}, nil // the issue stays In Review
}

// AddProbeStep puts the probe's row into e's table, before the merge step: the table is e's own, so the
// test that does it runs in parallel with the others.
func AddProbeStep(e *Engine) {
	rows := steps.Workflow().Steps()
	i := slices.IndexFunc(rows, func(s Step) bool { return s.Name == workflow.Merge })
	e.steps = steps.NewTable(slices.Insert(slices.Clone(rows), i, probeStep()), steps.Commands())
}
