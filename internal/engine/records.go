package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/record"
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
