package engine

import (
	"context"
	"fmt"
)

// NextPrompt renders the prompt the agent would get for issue n's next step, from the repository's
// template or the built-in one, and writes nothing. Documents the step reads from the branch (the
// research for plan, the plan for review and implement, the diff for self-review) are not read here; the
// prompt says where they would go.
func (e *Engine) NextPrompt(ctx context.Context, n int) (command, source, prompt string, err error) {
	ro := *e
	ro.DryRun = true
	ic, err := ro.reader().load(ctx, n, "")
	if err != nil {
		return "", "", "", err
	}
	if ic.state == "" {
		if _, err := ro.dryRun(ic); err != nil { // not enrolled, or labels no record explains
			return "", "", "", err
		}
	}
	p, err := ro.decide(ctx, ic)
	if err != nil {
		return "", "", "", err
	}
	if !p.Takes() || !p.Step.Agent(e.Config) {
		what := p.Message()
		if p.Takes() {
			what = string(p.Step.Name)
		}
		return "", "", "", inputErrorf("#%d's next step (%s) runs no agent, so it has no prompt", n, what)
	}
	command, kind := string(p.Step.Name), ""
	if doc := p.Step.Doc; doc != nil && doc.Folder != "" {
		kind = doc.Kind
	}
	artifact := "<the worktree>/" + ic.rec.Artifacts[kind].Path
	if ic.rec.Artifacts[kind].Path == "" {
		artifact = fmt.Sprintf("<the worktree>/thoughts/shared/%s/… (chosen when the step runs)", kind)
	}
	if p.Step.Phased {
		artifact = ""
	}
	// An issue no step has run for yet has no branch in its record: the one its first step will make.
	ic = ro.reader().filled(ic)
	d, err := ro.runner(ic, p.Step.Name).PromptData(ctx, artifact)
	if err != nil {
		return "", "", "", err
	}
	const fromBranch = "(read from the issue's branch when the step runs)"
	d.Research, d.Plan, d.Diff = fromBranch, fromBranch, fromBranch
	d.Feedback = ic.rec.Feedback
	if k, ok := ic.rec.PhasesLeft(); ok && p.Step.Phased {
		d.Phase, d.Phases, d.PhaseText = k+1, len(ic.rec.Phases), ic.rec.Phases[k].Text
		if d.PhaseText == "" {
			d.PhaseText = fromBranch
		}
	}
	prompt, err = e.Prompts.Render(command, d)
	if err != nil {
		return "", "", "", err
	}
	return command, e.Prompts.Source(command), prompt, nil
}
