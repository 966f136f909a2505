package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// A phase of the plan, as the implement and fix steps take it: the agent changes the step's copy, ralph
// checks the changes, runs verify, commits them with the phase's key and pushes.

// phase runs the agent (command implement, or fix for a fix round's phase) on phase k of the plan in ws,
// then checks, verifies, commits and pushes its changes. artifact is a file the agent may write besides its
// changes ("": none); read, when set, reads it before verify runs.
func (r *Runner) phase(ctx context.Context, rec *Record, ws *workspace.Workspace, k int, command, artifact string, read func()) (Outcome, error) {
	m := len(rec.Phases)
	ph := rec.Phases[k]
	key := fmt.Sprintf("implement/%d/%d", rec.Rounds["plan"], k+1)
	if sha, found, err := committedStep(ctx, ws, key); err != nil {
		return Outcome{}, err
	} else if found {
		r.log.Infof("#%d: phase %d is already on the branch (an earlier run stopped before recording it)", r.ic.N, k+1)
		rec.Phases[k].SHA = sha
		return Outcome{To: workflow.InProgress}, nil
	}
	d, err := r.PromptData(ctx, "")
	if err != nil {
		return Outcome{}, err
	}
	d.Plan = r.readBranchFile(ctx, ws, rec.Artifacts[planDocument.Kind].Path)
	d.Phase, d.Phases = k+1, m
	d.PhaseText = ph.Text
	if ph.Doc != "" {
		d.PhaseText += "\n\n" + truncate(r.readBranchFile(ctx, ws, ph.Doc), 200000)
	}
	if d.PhaseText == "" {
		if all, err := plantext.ParsePhases(d.Plan); err == nil && k < len(all) {
			d.PhaseText = all[k].Text
		}
	}
	if d.PhaseText == "" {
		d.PhaseText = "## Phase " + strconv.Itoa(k+1) + ": " + ph.Title
	}
	d.Artifact = artifact
	if err := r.runAgent(ctx, ws, command, artifact, k+1, m, d); err != nil {
		var be *session.BudgetError
		if errors.As(err, &be) && !be.Before {
			r.keepPhase(ctx, rec, ws, k, m, key, be)
		}
		return Outcome{}, err
	}
	if read != nil {
		read()
	}
	head, err := r.commitPhase(ctx, rec, ws, k, m, key)
	if err != nil {
		return Outcome{}, err
	}
	rec.Phases[k].SHA = head
	if ph.Fix && r.Usage != nil {
		rec.Phases[k].CostUSD = r.Usage.CostUSD // a fix phase's cost, self-review's or a fix round's
	}
	return Outcome{To: workflow.InProgress}, nil
}

// commitPhase checks the agent's changes of phase k (of m), runs verify, commits them with the phase's key
// and pushes.
func (r *Runner) commitPhase(ctx context.Context, rec *Record, ws *workspace.Workspace, k, m int, key string) (string, error) {
	changes, err := guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if len(changes) == 0 {
		return "", &StepError{Step: "implement", Reason: fmt.Sprintf("phase %d of %d changed no file", k+1, m)}
	}
	if err := r.session.Verify(ctx, ws, k+1, m); err != nil {
		return "", err
	}
	// verify may have written files (a build, a formatter): check them too.
	changes, err = guard(ctx, ws, "implement")
	if err != nil {
		return "", err
	}
	if err := r.session.Scan(ctx, ws, changes); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph: Phase %d of %d: #%d %s\n\n%s: %s", k+1, m, r.ic.N, Inert(rec.Phases[k].Title), trailerKey, key)
	head, err := ws.Commit(ctx, msg, r.author)
	if err != nil {
		return "", fmt.Errorf("committing phase %d: %w", k+1, err)
	}
	r.w.Checkpoint("after-commit")
	if err := push(ctx, ws); err != nil {
		return "", err
	}
	r.w.Checkpoint("after-push")
	return head, nil
}

// keepPhase keeps the work of an implement step stopped at a budget when it is a verified phase: the
// changes pass verify, and are committed with the phase's key and pushed (so /ralph retry goes on with the
// next phase). Otherwise nothing of the phase is pushed; the phases done before stay on the branch.
func (r *Runner) keepPhase(ctx context.Context, rec *Record, ws *workspace.Workspace, k, m int, key string, be *session.BudgetError) {
	sha, err := r.commitPhase(ctx, rec, ws, k, m, key)
	if err != nil {
		r.log.Warnf("#%d: phase %d's changes are not kept: %v", r.ic.N, k+1, err)
		be.Kept = fmt.Sprintf("Phase %d of %d's changes are not kept (%v); the phases done before stay on the branch `%s`, and `/ralph retry` does phase %d again.", k+1, m, err, r.ic.Rec.Branch, k+1)
		return
	}
	be.Kept = fmt.Sprintf("Phase %d of %d's changes passed verify and are committed (%s) on the branch `%s`; `/ralph retry` goes on with what is left.", k+1, m, short(sha), r.ic.Rec.Branch)
}
