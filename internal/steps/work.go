package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// trailerKey marks ralph's commits with the step that made them ("Ralph-Step: plan/1").
const trailerKey = "Ralph-Step"

// draftKey marks the commit of an unfinished document, which a rerun must not take for the step's.
const draftKey = "Ralph-Draft"

// committedStep looks for the commit of step key on the branch: a run that crashed after pushing it left it
// there (or, in ralph's repository, one that could not push it: it is pushed now).
func committedStep(ctx context.Context, ws *workspace.Workspace, key string) (string, bool, error) {
	sha, found, err := ws.FindStep(ctx, trailerKey, key)
	if err != nil {
		return "", false, fmt.Errorf("looking for the commit of %s: %w", key, err)
	}
	if found && ws.Built() != "" {
		// Built by an earlier run that could not push it: pushed now, as that run would have.
		if err := push(ctx, ws); err != nil {
			return "", false, err
		}
	}
	return sha, found, nil
}

// checkout gives the agent a fresh copy of the branch (of the base when the branch is new), with a
// HOME and TMPDIR of its own.
func (r *Runner) checkout(ctx context.Context) (*workspace.Workspace, error) {
	ws, err := r.workspaces.Prepare(ctx, r.ic.N, r.ic.Rec.Branch, r.ic.Rec.Base)
	if err != nil {
		return nil, fmt.Errorf("preparing the agent's copy: %w", err)
	}
	r.WS = ws
	r.session.Prepare(ws)
	if err := r.openDocs(ctx); err != nil {
		return nil, err
	}
	return ws, nil
}

// runAgent renders the prompt and runs the agent once, in the step's session.
func (r *Runner) runAgent(ctx context.Context, ws *workspace.Workspace, command, artifact string, phase, phases int, d prompts.Data) error {
	prompt, err := r.prompts.Render(command, d)
	if err != nil {
		return &StepError{Step: command, Reason: "the prompt template could not be rendered", Err: err}
	}
	if err := r.recordAhead(ctx); err != nil {
		return err
	}
	return r.session.Run(ctx, ws, session.Run{Command: command, Artifact: artifact, Phase: phase, Phases: phases, Prompt: prompt})
}

// guard records the agent's files in ralph's own index and refuses a change to protected paths, gitlinks,
// oversized files and symlinks that leave the repository.
func guard(ctx context.Context, ws *workspace.Workspace, step string) ([]git.Change, error) {
	changes, err := ws.Collect(ctx)
	var refused *workspace.RefusedError
	if errors.As(err, &refused) {
		return nil, &StepError{Step: step, Reason: refused.Error() + "; nothing was pushed"}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the agent's changes: %w", err)
	}
	return changes, nil
}

func push(ctx context.Context, ws *workspace.Workspace) error {
	if err := ws.Push(ctx); err != nil {
		var rej *git.PushRejectedError
		if errors.As(err, &rej) && len(rej.Rules) > 0 {
			quoted := make([]string, len(rej.Rules))
			for i, r := range rej.Rules {
				quoted[i] = "`" + Inert(r) + "`"
			}
			return &StepError{Step: "push", Reason: fmt.Sprintf("GitHub refused the push to %s: it breaks the repository's rules (GH013): %s; the same push meets the same rules, so change the ruleset or ralph's settings (`gh ralph doctor` lists the rules and what ralph needs of each), then retry", ws.Branch, strings.Join(quoted, ", ")), Err: err}
		}
		if errors.As(err, &rej) {
			return &StepError{Step: "push", Reason: fmt.Sprintf("the push to %s was refused (the branch moved, or a rule forbids it)", ws.Branch), Err: err}
		}
		return fmt.Errorf("pushing %s: %w", ws.Branch, err)
	}
	return nil
}

// readBranchFile reads an earlier document from ralph's repository at the commit the step began from
// (never from the agent's copy), or, when the documents are kept apart, at ralph's last commit on
// its documents branch; "" when it is not there.
func (r *Runner) readBranchFile(ctx context.Context, ws *workspace.Workspace, rel string) string {
	read := ws.Committed
	if r.Docs != nil {
		read = r.Docs.Own // kept apart: at ralph's last commit there (docs.go)
	}
	doc, err := read(ctx, rel)
	if err != nil {
		r.log.Warnf("reading %s: %v", rel, err)
	}
	return doc
}

// Prepare gives the step's agent its copy of the branch and the prompt's data.
func (r *Runner) Prepare(ctx context.Context) (*workspace.Workspace, prompts.Data, error) {
	ws, err := r.checkout(ctx)
	if err != nil {
		return nil, prompts.Data{}, err
	}
	d, err := r.PromptData(ctx, "")
	return ws, d, err
}

// PushCommitted pushes a commit ralph built and checked in this step but had not pushed when the step
// stopped, so no finished work is lost. Nothing else is ever pushed: not the agent's own commits, whatever
// their messages say, and not a ref the agent moved.
func (r *Runner) PushCommitted(ctx context.Context) error {
	var errs []error
	for _, ws := range []*workspace.Workspace{r.WS, r.Docs} {
		if ws == nil || ws.Built() == "" {
			continue
		}
		errs = append(errs, push(ctx, ws))
	}
	return errors.Join(errs...)
}
