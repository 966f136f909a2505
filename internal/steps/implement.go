package steps

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The implement step: one phase of the plan a run; ralph checks the agent's changes, runs verify, commits and
// pushes them.

func implementStep() Step {
	return Step{Name: workflow.Implement, From: workflow.InProgress, Running: workflow.InProgress,
		Guard: Guard{"phases left", phaseLeft}, To: []workflow.State{workflow.InProgress}, Agent: Always,
		Phased: true, Do: (*Runner).implement,
		Describe: func(_, _ workflow.State, rec Record) string {
			return fmt.Sprintf("phase %d of %d done", rec.PhasesDone(), len(rec.Phases))
		},
		Check: func(rec Record, _ config.Config) []CheckItem {
			text := "Implementation"
			if len(rec.Phases) > 0 {
				text = fmt.Sprintf("Implementation (%d of %d phases)", rec.PhasesDone(), len(rec.Phases))
			}
			_, left := rec.PhasesLeft()
			return []CheckItem{{len(rec.Phases) > 0 && !left && planApproved(rec), text}}
		}}
}

func phaseLeft(rec Record, _ config.Config) bool { _, left := rec.PhasesLeft(); return left }

func (r *Runner) implement(ctx context.Context, rec *Record) (Outcome, error) {
	k, _ := rec.PhasesLeft()
	ws, err := r.checkout(ctx)
	if err != nil {
		return Outcome{}, err
	}
	return r.phase(ctx, rec, ws, k, "implement", "", nil)
}
