package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The record's types are internal/record's; the engine's files name them without the package, as they did
// when the record lived here. Callers outside the engine use record's names.
type (
	Record        = record.Record
	Phase         = record.Phase
	Artifact      = record.Artifact
	Entry         = record.Entry
	Done          = record.Done
	Attempt       = record.Attempt
	PendingSplit  = record.PendingSplit
	SweepWait     = record.SweepWait
	FixRound      = record.FixRound
	RequiredCheck = record.RequiredCheck
	Links         = record.Links
)

// isStep says whether ev names one of the workflow's steps: what record.Check asks of the workflow. The
// table is built only for a record that names a step (one that waits for a sweep).
func isStep(ev workflow.Event) bool { return workflowTable().Named(ev) != nil }
