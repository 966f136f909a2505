package steps

import (
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Work is what one step's attempt makes beside its draft of the record, kept by the step's one runner
// until the run writes the outcome and removes the copies.
type Work struct {
	Step workflow.Event       // the step taken
	WS   *workspace.Workspace // the agent's copy of the step, once made
	Docs *workspace.Workspace // ralph's documents branch, when the documents are kept there
	// Usage is what the agent reported of the step.
	Usage *agent.Usage
	// Refused are the hosts ralph's network proxy refused the step's agent and verify commands, each
	// once, at most refusedMax; RefusedMore counts the others.
	Refused     []string
	RefusedMore int
	// Ahead is the record written before the agent started (the engine's write-ahead), nil until then.
	Ahead *Record
}

// NoteRefused adds a refused host to the step's, unless it is there or the list is full; it says
// whether the host is new.
func (w *Work) NoteRefused(h string) bool {
	if len(h) > refusedLen {
		h = strings.ToValidUTF8(h[:refusedLen], "") + "…"
	}
	for _, r := range w.Refused {
		if r == h {
			return false
		}
	}
	if len(w.Refused) >= refusedMax {
		w.RefusedMore++
		return false
	}
	w.Refused = append(w.Refused, h)
	return true
}

// refusedMax bounds the refused hosts one run records: the agent chooses them.
const refusedMax = netproxy.MaxRefused

// refusedLen bounds a recorded host, in bytes: the record lives in a comment GitHub bounds.
const refusedLen = 100
