package steps

import (
	"context"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// PromptData is what the step's prompt shows of the issue: its title, its body and the comments of the
// people who may drive ralph, cleaned (prompts.Clean); artifact is where the agent writes its document.
func (r *Runner) PromptData(ctx context.Context, artifact string) (prompts.Data, error) {
	title, hidTitle := prompts.Clean(r.ic.GH.Title, prompts.MaxTitle)
	body, hidBody := prompts.Clean(r.ic.GH.Body, prompts.MaxBody)
	hidden := hidTitle.Add(hidBody)
	d := prompts.Data{
		Repository: ownerRepo(r.ic.GH.HTMLURL),
		Issue:      prompts.Issue{Number: r.ic.N, Title: title, Body: body, URL: r.ic.GH.HTMLURL},
		Artifact:   artifact,
		Branch:     r.ic.Rec.Branch,
		Base:       r.ic.Rec.Base,
		Verify:     r.cfg.Verify,
		Protected:  r.cfg.AllProtected(),
	}
	for _, c := range r.w.Comments() {
		if c.User.IsBot() || strings.HasPrefix(c.Body, record.StatusMarker) {
			continue
		}
		// Anyone can comment on a public issue; only people who may drive ralph reach the agent.
		ok, err := r.people.Trusted(ctx, c.User.Login)
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
