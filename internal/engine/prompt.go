package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// NextPrompt renders the prompt the agent would get for issue n's next step, from the repository's
// template or the built-in one, and writes nothing. Documents the step reads from the issue's branch (the
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
	ro.reader().fillRecord(ic)
	d, err := ro.runner(ic, p.Step.Name).promptData(ctx, artifact)
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

func (r *runner) promptData(ctx context.Context, artifact string) (prompts.Data, error) {
	title, hidTitle := prompts.Clean(r.ic.gh.Title, prompts.MaxTitle)
	body, hidBody := prompts.Clean(r.ic.gh.Body, prompts.MaxBody)
	hidden := hidTitle.Add(hidBody)
	d := prompts.Data{
		Repository: ownerRepo(r.ic.gh.HTMLURL),
		Issue:      prompts.Issue{Number: r.ic.n, Title: title, Body: body, URL: r.ic.gh.HTMLURL},
		Artifact:   artifact,
		Branch:     r.ic.rec.Branch,
		Base:       r.ic.rec.Base,
		Verify:     r.cfg.Verify,
		Protected:  r.cfg.AllProtected(),
	}
	for _, c := range r.w.comments {
		if c.User.IsBot() || strings.HasPrefix(c.Body, record.StatusMarker) {
			continue
		}
		// Anyone can comment on a public issue; only people who may drive ralph reach the agent.
		ok, err := r.ic.people.trusted(ctx, c.User.Login)
		if err != nil {
			return d, err
		}
		if !ok {
			d.Omitted++
			continue
		}
		text, hid := prompts.Clean(c.Body, prompts.MaxComment)
		hidden = hidden.Add(hid)
		d.Comments = append(d.Comments, prompts.Comment{Author: c.User.Login, Body: text})
	}
	d.Hidden = hidden.String()
	return d, nil
}

// ownerRepo takes "owner/repo" out of an issue's web URL.
func ownerRepo(htmlURL string) string {
	parts := strings.Split(strings.TrimRight(htmlURL, "/"), "/")
	if len(parts) >= 4 {
		return parts[len(parts)-4] + "/" + parts[len(parts)-3]
	}
	return ""
}
