package steps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/plantext"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// split creates the sub-issues, links them to the parent and to each other, and enrolls them; it returns
// the ones that can start now. A rerun after
// a crash finds the parts it already created by their marker and creates only the rest.
func (r *Runner) split(ctx context.Context, rec *Record, subs []plantext.SubIssue) ([]int, error) {
	existing := map[int]ghapi.Issue{}
	linked := map[int]bool{}
	kids, err := r.gh.SubIssues(ctx, r.ic.N)
	if err != nil {
		return nil, fmt.Errorf("listing the sub-issues of #%d: %w", r.ic.N, err)
	}
	for _, k := range kids {
		p, part, ok, err := r.people.ParentOf(ctx, r.ic.N, k)
		if err != nil {
			return nil, err
		}
		if ok && p == r.ic.N && part <= len(subs) {
			existing[part], linked[part] = k, true
		}
	}
	if len(existing) < len(subs) {
		// A part created just before a crash is not linked yet: look for it among the enrolled issues.
		open, err := r.gh.Issues(ctx, ghapi.IssueFilter{State: "all", Labels: []string{workflow.LabelBuild}})
		if err != nil {
			return nil, fmt.Errorf("looking for sub-issues already created: %w", err)
		}
		for _, is := range open {
			p, part, ok, err := r.people.ParentOf(ctx, r.ic.N, is)
			if err != nil {
				return nil, err
			}
			if _, seen := existing[part]; ok && p == r.ic.N && part <= len(subs) && !seen {
				existing[part] = is
			}
		}
	}
	children := make([]ghapi.Issue, len(subs))
	for k, sub := range subs {
		part := k + 1
		child, ok := existing[part]
		if !ok {
			body := plantext.SubIssueBody(sub, r.ic.N, part, len(subs))
			if child, err = r.gh.CreateIssue(ctx, ghapi.NewIssue{Title: Inert(sub.Title), Body: body, Labels: []string{workflow.LabelBuild}}); err != nil {
				return nil, fmt.Errorf("creating sub-issue %d: %w", part, err)
			}
			r.w.Checkpoint("after-sub-issue")
		}
		if !linked[part] {
			if err := r.gh.AddSubIssue(ctx, r.ic.N, child.ID); err != nil {
				return nil, fmt.Errorf("linking #%d as a sub-issue of #%d: %w", child.Number, r.ic.N, err)
			}
		}
		children[k] = child
	}
	rec.Children = nil
	rec.ChildDeps = map[string][]int{}
	for k, sub := range subs {
		child := children[k]
		rec.Children = append(rec.Children, child.Number)
		for _, b := range sub.BlockedBy {
			blocker := children[b-1]
			rec.ChildDeps[strconv.Itoa(child.Number)] = append(rec.ChildDeps[strconv.Itoa(child.Number)], blocker.Number)
			if _, had := existing[k+1]; had {
				continue // created by an earlier run, which linked its dependencies
			}
			if err := r.gh.AddBlockedBy(ctx, child.Number, blocker.ID); err != nil && !alreadyExists(err) {
				return nil, fmt.Errorf("recording that #%d is blocked by #%d: %w", child.Number, blocker.Number, err)
			}
		}
	}
	return startable(*rec, nil), nil
}

func alreadyExists(err error) bool {
	var ge *ghapi.Error
	return errors.As(err, &ge) && ge.Status == 422 && strings.Contains(strings.ToLower(ge.Message), "already")
}

// The triage's comment: the document under a heading, quoted whole in a fence it cannot close (where GitHub
// acts on no mention or reference, and an HTML comment is written inert), sealed with the notice marker of
// the run. A held split is read back from it as ralph wrote it.
const triageHeader = "## Triage\n\n"

func triageMarker(runs int) string { return fmt.Sprintf("<!-- ralph:notice triage %d -->", runs) }

func triageBody(doc, marker string) string {
	return record.Seal(triageHeader+fence("markdown", truncate(doc, 60000)), marker)
}

// triageDocument is the document of a triage comment ralph sealed with marker: what the fence holds.
func triageDoc(body, marker string) (string, bool) {
	inner, ok := strings.CutPrefix(body, triageHeader)
	if !ok {
		return "", false
	}
	inner = strings.TrimSpace(strings.TrimSuffix(inner, marker))
	lines := strings.Split(inner, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "```") || strings.TrimSuffix(lines[0], "markdown") != lines[len(lines)-1] {
		return "", false
	}
	return strings.Join(lines[1:len(lines)-1], "\n"), true
}

// postTriage posts the triage's document as this run's triage comment (a rerun edits it).
func (r *Runner) postTriage(ctx context.Context, doc string) (ghapi.Comment, error) {
	marker := triageMarker(r.ic.Rec.Runs)
	return r.w.UpsertComment(ctx, marker, triageBody(doc, marker))
}

// postedTriage finds the triage document of this run's triage comment (ralph's own, with the marker of the
// record's run count) when an earlier run posted it and did not record it: a comment written since the
// status comment was last saved, or, before there is one, within the hour in which runs finish a step
// (MaxFinishing). An older one with the same marker is another story (a status comment deleted to start the
// issue over starts the count again).
func (r *Runner) postedTriage(ctx context.Context) (string, bool, error) {
	marker := triageMarker(r.ic.Rec.Runs)
	i, err := r.people.OwnComment(ctx, r.w.Comments(), func(b string) bool { return record.Carries(b, marker) })
	if err != nil || i < 0 {
		return "", false, err
	}
	c := r.w.Comments()[i]
	at := c.UpdatedAt
	if at.IsZero() {
		at = c.CreatedAt
	}
	switch st := r.w.Status(); {
	case st != nil && at.Before(st.UpdatedAt), st == nil && at.Before(r.now().Add(-time.Hour)):
		return "", false, nil
	}
	doc, ok := triageDoc(strings.TrimSpace(strings.ReplaceAll(c.Body, "\r\n", "\n")), marker)
	return doc, ok, nil
}

// commentDigest fixes a comment's text as ralph wrote it (GitHub may hand it back with CRLF line ends or
// trimmed).
func commentDigest(body string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))))
	return hex.EncodeToString(sum[:])
}

// splitDecided is a triage that decided to split ic. The parts are checked against split.max and what
// GitHub takes before anything is created; a split that passes is made now, or, with split.approve, held
// for a person's approval (the issue stays in Backlog and the planner waits: WaitSplit).
func (r *Runner) splitDecided(ctx context.Context, rec *Record, doc string) (Outcome, error) {
	subs, err := plantext.ParseSplit(doc)
	if err != nil {
		return Outcome{}, &StepError{Step: "triage", Reason: "the triage decided to split the issue, but " + err.Error()}
	}
	marker := triageMarker(r.ic.Rec.Runs)
	body := triageBody(doc, marker)
	cm, err := r.w.UpsertComment(ctx, marker, body)
	if err != nil {
		return Outcome{}, err
	}
	if why := plantext.CheckSplit(subs, r.cfg.Split.Max); why != "" {
		rec.SetArtifact("triage", Artifact{Comment: cm.HTMLURL, Verdict: "split: to a person"})
		return Outcome{Person: splitEscalation(r.ic.N, why)}, nil
	}
	if r.cfg.Split.Approve {
		rec.Split = &PendingSplit{Marker: marker, Digest: commentDigest(body), Parts: len(subs)}
		rec.SetArtifact("triage", Artifact{Comment: cm.HTMLURL, Verdict: "split: waits for approval"})
		return Outcome{}, nil
	}
	return r.makeSplit(ctx, rec, subs, cm.HTMLURL)
}

// approvedSplit makes the split a person approved, from ralph's own triage comment as ralph wrote it: a
// comment that is gone or changed since makes nothing, and goes to a person.
func (r *Runner) approvedSplit(ctx context.Context, rec *Record, ps *PendingSplit) (Outcome, error) {
	if ps.ApprovedBy == "" { // the planner does not run the step then; said for a caller that would
		return Outcome{Wait: &Waiting{Paused: true, Message: fmt.Sprintf("#%d waits for a person to approve its split", r.ic.N)}}, nil
	}
	doc, url, found, err := r.heldSplit(ctx, ps)
	if err != nil {
		return Outcome{}, err
	}
	why := fmt.Sprintf("The triage comment whose split @%s approved is gone, or changed since ralph wrote it. Nothing was created.", ps.ApprovedBy)
	var subs []plantext.SubIssue
	if found {
		if subs, err = plantext.ParseSplit(doc); err != nil {
			why = fmt.Sprintf("The split @%s approved cannot be read back: %v. Nothing was created.", ps.ApprovedBy, err)
		} else {
			why = plantext.CheckSplit(subs, r.cfg.Split.Max)
		}
	}
	if why != "" {
		rec.Split = nil
		return Outcome{Person: splitEscalation(r.ic.N, why)}, nil
	}
	return r.makeSplit(ctx, rec, subs, url)
}

// heldSplit finds the document of a held split in ralph's triage comment, as ralph wrote it.
func (r *Runner) heldSplit(ctx context.Context, ps *PendingSplit) (doc, url string, found bool, err error) {
	for _, c := range r.w.Comments() {
		body := strings.TrimSpace(strings.ReplaceAll(c.Body, "\r\n", "\n"))
		if !strings.HasSuffix(body, ps.Marker) || commentDigest(body) != ps.Digest {
			continue
		}
		own, err := r.people.Wrote(ctx, c.User)
		if err != nil {
			return "", "", false, err
		}
		if own {
			doc, ok := triageDoc(body, ps.Marker)
			return doc, c.HTMLURL, ok, nil
		}
	}
	return "", "", false, nil
}

// makeSplit creates, links and enrolls the parts; the parent follows them from In Progress.
func (r *Runner) makeSplit(ctx context.Context, rec *Record, subs []plantext.SubIssue, comment string) (Outcome, error) {
	dispatch, err := r.split(ctx, rec, subs)
	if err != nil {
		return Outcome{}, err
	}
	rec.Split = nil
	rec.SetArtifact("triage", Artifact{Comment: comment, Verdict: string(workflow.InProgress)})
	return Outcome{To: workflow.InProgress, Dispatch: dispatch}, nil
}

// splitEscalation sends a split ralph will not make to a person; a retry triages the issue again.
func splitEscalation(n int, why string) *Escalation {
	return &Escalation{
		Before: workflow.Backlog,
		Reason: why,
		Advice: fmt.Sprintf("Read the triage above. Split the issue by hand, or edit it (to let one split make more sub-issues, raise `split.max` in .github/ralph.yml), then say `/ralph retry` (or run `gh ralph retry %d`) to triage it again.", n),
	}
}
