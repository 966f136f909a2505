package engine

import (
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// work is what one step's attempt makes beside its draft of the record, kept by the step's one runner
// until the run writes the outcome and removes the copies.
type work struct {
	step workflow.Event       // the step taken
	ws   *workspace.Workspace // the agent's copy of the step, once made
	docs *workspace.Workspace // ralph's documents branch, when the documents are kept there
	// usage is what the agent reported of the step (usage.go).
	usage *agent.Usage
	// refused are the hosts ralph's network proxy refused the step's agent and verify commands, each
	// once, at most refusedMax; refusedMore counts the others (refused.go).
	refused     []string
	refusedMore int
	// ahead is the record written before the agent started (ahead.go), nil until then.
	ahead *Record
}

// noteRefused adds a refused host to the step's, unless it is there or the list is full; it says
// whether the host is new.
func (w *work) noteRefused(h string) bool {
	if len(h) > refusedLen {
		h = strings.ToValidUTF8(h[:refusedLen], "") + "…"
	}
	for _, r := range w.refused {
		if r == h {
			return false
		}
	}
	if len(w.refused) >= refusedMax {
		w.refusedMore++
		return false
	}
	w.refused = append(w.refused, h)
	return true
}
