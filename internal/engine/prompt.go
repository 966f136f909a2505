package engine

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// NextPrompt renders the prompt the agent would get for issue n's next step, from the repository's
// template or the built-in one, and writes nothing. Documents the step reads from the branch (the
// research for plan, the plan for review and implement, the diff for self-review) are not read here; the
// prompt says where they would go.
func (e *Engine) NextPrompt(ctx context.Context, n int) (command, source, prompt string, err error) {
	ro := *e
	ro.DryRun = true
	ic, err := ro.load(ctx, n)
	if err != nil {
		return "", "", "", err
	}
	res, err := ro.dryRun(ic)
	if err != nil {
		return "", "", "", err
	}
	command, kind := agentCommand(res.Step, e.Config)
	if command == "" {
		what := string(res.Step)
		if what == "" {
			what = "none: " + res.Message
		}
		return "", "", "", inputErrorf("#%d's next step (%s) runs no agent, so it has no prompt", n, what)
	}
	artifact := "<the worktree>/" + ic.rec.Artifacts[kind].Path
	if ic.rec.Artifacts[kind].Path == "" {
		artifact = fmt.Sprintf("<the worktree>/thoughts/shared/%s/… (chosen when the step runs)", kind)
	}
	if command == "implement" {
		artifact = ""
	}
	d, err := ro.promptData(ctx, ic, artifact)
	if err != nil {
		return "", "", "", err
	}
	const fromBranch = "(read from the issue's branch when the step runs)"
	d.Research, d.Plan, d.Diff = fromBranch, fromBranch, fromBranch
	d.Feedback = ic.rec.Feedback
	if k, ok := ic.rec.phasesLeft(); ok && command == "implement" {
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

// agentCommand is the agent command a step runs and the kind of document it writes ("" when the step
// runs no agent).
func agentCommand(ev workflow.Event, cfg config.Config) (command, kind string) {
	switch ev {
	case workflow.Triage:
		return "triage", "triage"
	case workflow.Research:
		return "research", "research"
	case workflow.Plan:
		return "plan", "plan"
	case workflow.Review:
		if cfg.Review == config.ReviewAuto {
			return "review", "review"
		}
	case workflow.Implement:
		return "implement", ""
	case workflow.PR:
		if cfg.SelfReview {
			return "self-review", "self-review"
		}
	}
	return "", ""
}
