package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// New is an engine with e's dependencies and the workflow's table, built from the steps' declarations.
func New(e Engine) *Engine {
	e.steps = workflowTable()
	return &e
}

// workflowTable is the workflow's table: its steps and the commands' moves.
func workflowTable() *table { return steps.Workflow() }

// The package's functions that read the workflow's table without an engine (gh ralph status, sweeps,
// the demo): each builds it from the declarations.

// Next plans what happens to issue n with record rec (rec.State "" when ralph holds none; enrolled then
// says whether ralph:build is on it) under config c.
func Next(n int, rec Record, enrolled bool, f Facts, c config.Config) Decision {
	return workflowTable().Next(n, rec, enrolled, f, c)
}

// RenderStatus renders issue n's status comment for rec under cfg (see renderStatus).
func RenderStatus(n int, rec Record, cfg config.Config, links Links) string {
	return workflowTable().RenderStatus(n, rec, cfg, links, Facts{})
}

// Documents are the kinds of document the steps write, in the workflow's order.
func Documents() []Document { return workflowTable().Documents() }

// DocumentKinds are the record's artifact keys, in the workflow's order.
func DocumentKinds() []string {
	var out []string
	for _, d := range Documents() {
		out = append(out, d.Kind)
	}
	return out
}

// Transitions are the workflow's legal moves, derived from the steps' declarations.
func Transitions() []workflow.Transition { return workflowTable().Flow.Transitions() }

// isStep says whether ev names one of the workflow's steps: what record.Check asks of the workflow. The
// table is built only for a record that names a step (one that waits for a sweep).
func isStep(ev workflow.Event) bool { return workflowTable().Named(ev) != nil }
