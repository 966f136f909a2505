package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// The implement step: one phase of the plan a run; ralph checks the agent's changes, runs verify, commits and
// pushes them.

func implementStep() Step {
	return Step{Name: workflow.Implement, From: workflow.InProgress, Running: workflow.InProgress, When: phaseLeft, Agent: always,
		Phased: true, Do: (*runner).implement,
		Describe: func(_, _ workflow.State, rec Record) string {
			return fmt.Sprintf("phase %d of %d done", rec.phasesDone(), len(rec.Phases))
		},
		Check: func(rec Record, _ config.Config) []checkItem {
			text := "Implementation"
			if len(rec.Phases) > 0 {
				text = fmt.Sprintf("Implementation (%d of %d phases)", rec.phasesDone(), len(rec.Phases))
			}
			_, left := rec.phasesLeft()
			return []checkItem{{len(rec.Phases) > 0 && !left && planApproved(rec), text}}
		}}
}

func phaseLeft(rec Record, _ config.Config) bool { _, left := rec.phasesLeft(); return left }

func (r *runner) implement(ctx context.Context, rec *Record) (Outcome, error) {
	k, _ := rec.phasesLeft()
	m := len(rec.Phases)
	ph := rec.Phases[k]
	ws, err := r.checkout(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if ph.Fix && rec.PR != 0 && rec.Head != "" && ws.RemoteOld != rec.Head {
		// Someone pushed to ralph's branch since ralph's last push: their work is not ralph's to build over.
		return Outcome{Person: &Escalation{Before: workflow.InProgress,
			Reason: fmt.Sprintf("The branch `%s` moved since ralph's last push (%s, now %s): someone else pushed to it.", rec.Branch, short(rec.Head), short(ws.RemoteOld)),
			Advice: "ralph does not build over a person's work. Finish the change by hand, or say `/ralph retry` to let ralph go on from the branch as it is now."}}, nil
	}
	key := fmt.Sprintf("implement/%d/%d", rec.Rounds["plan"], k+1)
	if sha, found, err := committedStep(ctx, ws, key); err != nil {
		return Outcome{}, err
	} else if found {
		r.log.Infof("#%d: phase %d is already on the branch (an earlier run stopped before recording it)", r.ic.n, k+1)
		rec.Phases[k].SHA = sha
		return Outcome{To: workflow.InProgress}, nil
	}
	d, err := r.promptData(ctx, "")
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = r.readBranchFile(ctx, ws, rec.Artifacts[planDocument.Kind].Path)
	d.Phase, d.Phases = k+1, m
	d.PhaseText = ph.Text
	if d.PhaseText == "" {
		if all, err := ParsePhases(d.Plan); err == nil && k < len(all) {
			d.PhaseText = all[k].Text
		}
	}
	if d.PhaseText == "" {
		d.PhaseText = "## Phase " + strconv.Itoa(k+1) + ": " + ph.Title
	}
	// A review's fix phase: the agent also says, thread by thread, what it did (see fix.go).
	answers := ""
	if f := rec.Fix; ph.Fix && f != nil && len(f.Threads) > 0 {
		answers = filepath.Join(ws.Tmp, answersFile)
		d.Artifact = answers
	}
	if err := r.runAgent(ctx, ws, "implement", answers, k+1, m, d); err != nil {
		var be *budgetError
		if errors.As(err, &be) && !be.before {
			r.keepPhase(ctx, rec, ws, k, m, key, be)
		}
		return Outcome{}, err
	}
	if answers != "" {
		// Read before verify runs in the same boundary (and may clear TMPDIR); a missing file: all changed.
		if b, err := ws.TempDocument(answersFile); err == nil {
			rec.Fix.Unchanged = readAnswers(string(b), len(rec.Fix.Threads))
		}
	}
	head, err := r.commitPhase(ctx, rec, ws, k, m, key)
	if err != nil {
		return Outcome{}, err
	}
	rec.Phases[k].SHA = head
	if ph.Fix && r.ic.usage != nil {
		rec.Phases[k].CostUSD = r.ic.usage.CostUSD
	}
	return Outcome{To: workflow.InProgress}, nil
}

// commitPhase checks the agent's changes of phase k (of m), runs verify, commits them with the phase's key
// and pushes.
func (r *runner) commitPhase(ctx context.Context, rec *Record, ws *workspace.Workspace, k, m int, key string) (string, error) {
	changes, err := guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if len(changes) == 0 {
		return "", &StepError{Step: "implement", Reason: fmt.Sprintf("phase %d of %d changed no file", k+1, m)}
	}
	if err := r.verify(ctx, ws, k+1, m); err != nil {
		return "", err
	}
	// verify may have written files (a build, a formatter): check them too.
	changes, err = guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if err := r.scanSecrets(ctx, ws, changes); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph: Phase %d of %d: #%d %s\n\n%s: %s", k+1, m, r.ic.n, Inert(rec.Phases[k].Title), trailerKey, key)
	head, err := ws.Commit(ctx, msg, r.author)
	if err != nil {
		return "", fmt.Errorf("committing phase %d: %w", k+1, err)
	}
	r.w.checkpoint("after-commit")
	if err := push(ctx, r.ic, ws); err != nil {
		return "", err
	}
	r.w.checkpoint("after-push")
	return head, nil
}
