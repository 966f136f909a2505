package engine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// FirstState is where enrollment puts an issue under config c.
func FirstState(c config.Config) workflow.State {
	switch {
	case c.Triage:
		return workflow.Backlog
	case c.Research:
		return workflow.ResearchNeeded
	}
	return workflow.ReadyForPlan
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a branch- and file-name-safe short form of an issue title, one that forms no reference to
// another issue (see inertSlug).
func Slug(title string) string {
	s := inertSlug(strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-"))
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "issue"
	}
	return s
}

// enroll is bookkeeping, not a step: the first state and the branch name. The labels and the status comment
// are written by the step that follows (its lock state, or its outcome), or by flush when no step runs, so
// that enrolling costs no request of its own.
func (r reader) enroll(ic *issue) error {
	to := FirstState(r.cfg)
	r.fillRecord(ic)
	if err := r.steps.flow.Check("", workflow.Enroll, to); err != nil {
		return err
	}
	ic.state, ic.rec.State = to, to
	ic.rec.Note(Entry{Step: workflow.Enroll, To: to, At: r.now(), URL: r.runURL, Outcome: "done", Message: "enrolled"})
	r.log.Infof("#%d enrolled: %s", ic.n, to.Title())
	return nil
}

// confused sends an issue being enrolled to a person when it already carries several state labels that no
// record of ralph's explains: nothing says which, if any, is right.
func (r reader) confused(ctx context.Context, ic *issue) error {
	reason := fmt.Sprintf("The issue had %d state labels (%s) and ralph holds no record that says which is right. Remove the wrong ones and say `/ralph retry`.", len(ic.stray), joinStates(ic.stray))
	notices, err := r.steps.escalate(&ic.rec, "", "", reason, "labels", "### ralph needs a person\n\n"+reason)
	if err != nil {
		return err
	}
	for _, n := range notices {
		if err := r.writer(ic).notice(ctx, n.Key, n.Body); err != nil {
			return err
		}
	}
	ic.rec.State = workflow.HumanNeeded
	if err := r.writer(ic).setState(ctx, workflow.HumanNeeded); err != nil {
		return err
	}
	return r.writer(ic).saveStatus(ctx)
}

// fillRecord gives a record what every step needs of it: the slug, the branch and the date of its documents.
func (r reader) fillRecord(ic *issue) {
	if ic.rec.Slug == "" {
		ic.rec.Slug = Slug(ic.gh.Title)
	}
	if ic.rec.Branch == "" {
		ic.rec.Branch = r.cfg.BranchPrefix + strconv.Itoa(ic.n) + "-" + ic.rec.Slug
	}
	if ic.rec.Date == "" {
		ic.rec.Date = r.now().Format("2006-01-02")
	}
}
