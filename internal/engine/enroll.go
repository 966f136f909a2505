package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/steps"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// FirstState is where enrolling puts an issue under config c (steps.FirstState).
func FirstState(c config.Config) workflow.State { return steps.FirstState(c) }

// enroll is bookkeeping, not a step: the first state and the branch name. The labels and the status comment
// are written by the step that follows (its lock state, or its outcome), or by flush when no step runs, so
// that enrolling costs no request of its own. It returns the issue enrolled.
func (r reader) enroll(ic issue) (issue, error) {
	to := FirstState(r.cfg)
	if err := r.steps.Flow.Check("", workflow.Enroll, to); err != nil {
		return ic, err
	}
	ic = r.filled(ic).in(to)
	ic.rec.Note(Entry{Step: workflow.Enroll, To: to, At: r.now(), URL: r.runURL, Outcome: "done", Message: "enrolled"})
	r.log.Infof("#%d enrolled: %s", ic.n, to.Title())
	return ic, nil
}

// confused sends an issue being enrolled to a person when it already carries several state labels that no
// record of ralph's explains: nothing says which, if any, is right. It returns the issue as written.
func (r reader) confused(ctx context.Context, ic issue) (issue, error) {
	reason := fmt.Sprintf("The issue had %d state labels (%s) and ralph holds no record that says which is right. Remove the wrong ones and say `/ralph retry`.", len(ic.stray), joinStates(ic.stray))
	rec := ic.rec.Clone()
	notices, err := escalate(r.steps, &rec, "", "", reason, "labels", "### ralph needs a person\n\n"+reason)
	if err != nil {
		return ic, err
	}
	for _, n := range notices {
		if err := ic.w.notice(ctx, n.Key, n.Body); err != nil {
			return ic, err
		}
	}
	rec.State = workflow.HumanNeeded
	ic, err = ic.w.setState(ctx, ic.with(rec), workflow.HumanNeeded)
	if err != nil {
		return ic, err
	}
	return ic, ic.w.saveStatus(ctx, ic)
}

// filled is the issue with what every step needs of its record: the slug, the branch and the date of its
// documents.
func (r reader) filled(ic issue) issue {
	if ic.rec.Slug != "" && ic.rec.Branch != "" && ic.rec.Date != "" {
		return ic
	}
	return ic.edited(func(rec *Record) {
		if rec.Slug == "" {
			rec.Slug = plantext.Slug(ic.gh.Title)
		}
		if rec.Branch == "" {
			rec.Branch = r.cfg.BranchPrefix + strconv.Itoa(ic.n) + "-" + rec.Slug
		}
		if rec.Date == "" {
			rec.Date = r.now().Format("2006-01-02")
		}
	})
}

// EnrollReader is what MayEnroll reads of GitHub.
type EnrollReader interface {
	Owner() string
	Repo() string
	Issue(ctx context.Context, n int) (ghapi.Issue, error)
	LabeledBy(ctx context.Context, n int, label string) (string, error)
	Permission(ctx context.Context, login string) (string, error)
}

// Enrollment is what MayEnroll found of an issue's ralph:build label.
type Enrollment struct {
	// Labeled: the issue has ralph:build already.
	Labeled bool
	// LabeledBy is who added it last ("" when no one is known).
	LabeledBy string
	// Trusted: the label counts, as the runs read it: login added it last, or someone who may drive
	// ralph. A label that does not count is no one's to run, and every sweep skips it.
	Trusted bool
}

// MayEnroll says whether login may enroll issue n, with the checks a run makes before it acts on a
// person's label: the issue exists, is an issue, is open, is not Done or Canceled, and login may drive
// ralph (a *RefusedError when not; an *InputError for the issue). What it found of the label says whether
// labeling it again would make it count. It writes nothing.
func MayEnroll(ctx context.Context, gh EnrollReader, n int, login string) (Enrollment, error) {
	if err := checkNumber(n); err != nil {
		return Enrollment{}, err
	}
	is, err := gh.Issue(ctx, n)
	if errors.Is(err, ghapi.ErrNotFound) {
		return Enrollment{}, inputErrorf("issue #%d does not exist in %s/%s", n, gh.Owner(), gh.Repo())
	}
	if err != nil {
		return Enrollment{}, err
	}
	if is.IsPull() {
		return Enrollment{}, inputErrorf("#%d is a pull request; ralph works on issues", n)
	}
	if is.State == "closed" {
		return Enrollment{}, inputErrorf("#%d is closed; reopen it first", n)
	}
	may := PermissionAuthorizer{Permission: gh.Permission}
	ok, err := may.Authorize(ctx, login)
	if err != nil {
		return Enrollment{}, fmt.Errorf("checking your permission on %s/%s: %w", gh.Owner(), gh.Repo(), err)
	}
	if !ok {
		return Enrollment{}, &RefusedError{Login: login, Action: ActEnroll}
	}
	for _, l := range is.LabelNames() {
		if st, ok := workflow.StateFromLabel(l); ok && (st == workflow.Done || st == workflow.Canceled) {
			return Enrollment{}, inputErrorf("#%d is %s: ralph's work on it is over, so enrolling it does nothing (open a new issue for more work)", n, st.Title())
		}
	}
	if !slices.Contains(is.LabelNames(), workflow.LabelBuild) {
		return Enrollment{}, nil
	}
	who, err := gh.LabeledBy(ctx, n, workflow.LabelBuild)
	if err != nil {
		return Enrollment{}, fmt.Errorf("reading who labeled #%d %s: %w", n, workflow.LabelBuild, err)
	}
	en := Enrollment{Labeled: true, LabeledBy: who, Trusted: who == login}
	if !en.Trusted && who != "" {
		if en.Trusted, err = may.Authorize(ctx, who); err != nil {
			return Enrollment{}, fmt.Errorf("checking the permission of @%s, who labeled #%d: %w", who, n, err)
		}
	}
	return en, nil
}
