package engine

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
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

// refusedMax bounds the refused hosts one run records: the agent chooses them.
const refusedMax = netproxy.MaxRefused

// refusedLen bounds a recorded host, in bytes: the record lives in a comment GitHub bounds.
const refusedLen = 100

// explainTurnLimit adds to a failure that the agent had stopped at its turn limit, when it had: the likely
// reason it did not finish.
func (r *runner) explainTurnLimit(serr *StepError) {
	if r.usage == nil || !r.usage.HitTurnLimit || strings.Contains(serr.Reason, "turn limit") {
		return
	}
	serr.Reason += fmt.Sprintf(" (the agent stopped at its turn limit, agent.max_turns: %d; raise it if the step needs more)", r.cfg.Agent.MaxTurns)
}
