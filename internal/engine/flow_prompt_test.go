package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowNextPrompt: NextPrompt renders the next step's prompt and writes nothing.
func TestFlowNextPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review = config.ReviewSkip })
	ctx := context.Background()
	n := h.enrolled("Parse widgets")
	command, source, prompt, err := h.eng.NextPrompt(ctx, n)
	if err != nil || command != "research" || source != "built-in" || !strings.Contains(prompt, "Parse widgets") || !strings.Contains(prompt, "chosen when the step runs") {
		t.Errorf("NextPrompt = %q, %q, %v:\n%s", command, source, err, prompt)
	}
	if h.gh.writeCount() != 0 || len(h.agent.commands()) != 0 {
		t.Errorf("NextPrompt wrote %s or ran the agent %v", h.gh.writes(), h.agent.commands())
	}
	h.to(n, workflow.InProgress, 3)
	command, _, prompt, err = h.eng.NextPrompt(ctx, n)
	if err != nil || command != "implement" || !strings.Contains(prompt, "read from the issue's branch when the step runs") {
		t.Errorf("NextPrompt = %q, %v:\n%s", command, err, prompt)
	}
	// Review skip runs no agent: no prompt.
	m := h.enrolled("Other")
	h.to(m, workflow.PlanInReview, 2)
	var ie *engine.InputError
	if _, _, _, err := h.eng.NextPrompt(ctx, m); !errors.As(err, &ie) || !strings.Contains(err.Error(), "runs no agent") {
		t.Errorf("NextPrompt before a skipped review: %v", err)
	}
}

// TestFlowHostileTitle: an issue's title reaches branch names, commits and the pull request inert: no
// reference to another issue, no mention.
func TestFlowHostileTitle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Review, c.Research = config.ReviewSkip, false })
	n := h.gh.addIssue("Fixes #2 for @bob GH-3", "", workflow.LabelBuild)
	res := h.to(n, workflow.InReview, 6)
	rec := h.gh.record(t, n)
	if rec.Branch != "ralph/1-fixes-2-for-bob-3" || rec.Slug != plantext.Slug("Fixes #2 for @bob GH-3") {
		t.Errorf("branch %q, slug %q", rec.Branch, rec.Slug)
	}
	pr := h.gh.pull(rec.PR)
	if pr.Title != engine.Inert("Fixes #2 for @bob GH-3")+" (#1)" || strings.Contains(pr.Title, "#2") || strings.Contains(pr.Title, "@bob") {
		t.Errorf("pull request title %q", pr.Title)
	}
	if strings.Contains(pr.Body, "#2") || !strings.Contains(pr.Body, "Closes #1") || res.PRURL != pr.HTMLURL {
		t.Errorf("pull request body:\n%s", pr.Body)
	}
	for _, s := range h.subjects(rec.Branch) {
		if strings.Contains(s, "#2") || strings.Contains(s, "@bob") {
			t.Errorf("commit subject %q holds a reference", s)
		}
	}
}
