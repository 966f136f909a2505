package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// parentMarkerPrefix starts the hidden line that ties a sub-issue ralph created to its parent.
const parentMarkerPrefix = "<!-- ralph:parent "

func parentMarker(parent, part int) string {
	return fmt.Sprintf("%s%d part %d -->", parentMarkerPrefix, parent, part)
}

// parentMarkerRE is the marker where ralph writes it: the last line of the body, alone on its line. The
// agent's text above it is escaped (subIssueBody) so that it holds no "<!--" of its own, and a marker
// anywhere else is no marker.
var parentMarkerRE = regexp.MustCompile(`(?:\A|\n)<!-- ralph:parent ([1-9]\d{0,9}) part ([1-9]\d{0,5}) -->\n?\z`)

// parseParent reads the parent and part of a sub-issue ralph created from the end of its body. Only a body
// ralph wrote counts (parentOf checks who opened the issue).
func parseParent(body string) (parent, part int, ok bool) {
	m := parentMarkerRE.FindStringSubmatch(strings.ReplaceAll(body, "\r\n", "\n"))
	if m == nil {
		return 0, 0, false
	}
	parent, err1 := strconv.Atoi(m[1])
	part, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return parent, part, true
}

// parentOf is the parent and part of is when ralph split it off: its body ends with ralph's marker and it
// was opened by ralph (or by someone with write access, whose word ralph takes as its own). Anyone can open
// an issue whose body ends with a marker.
func (p people) parentOf(ctx context.Context, ic *issue, is ghapi.Issue) (parent, part int, ok bool, err error) {
	parent, part, ok = parseParent(is.Body)
	if !ok {
		return 0, 0, false, nil
	}
	may := func(ctx context.Context, login string) (bool, error) { return p.trusted(ctx, ic, login) }
	own, err := WroteRecord(ctx, is.User, may, p.identity)
	if err != nil {
		return 0, 0, false, fmt.Errorf("checking who opened #%d: %w", is.Number, err)
	}
	if !own {
		p.log.Warnf("#%d: ignoring the parent marker in #%d, opened by @%s: only ralph marks its sub-issues", ic.n, is.Number, is.User.Login)
		return 0, 0, false, nil
	}
	return parent, part, true, nil
}

// Limits of what GitHub takes in an issue (characters; bytes are counted, which is never fewer).
const (
	maxIssueTitle = 256
	// maxSubIssueBody leaves room under GitHub's 65536 for the footer ralph adds.
	maxSubIssueBody = 60000
)

// escapeBody makes agent text that ralph puts in an issue body inert: each line as Inert makes a title (no
// reference, mention, link or character reference), and every "<" (which Inert writes "＜") as "&lt;",
// which GitHub shows as "<" but which opens no HTML comment or tag, so that the text can neither hide
// anything nor carry a marker of ralph's.
func escapeBody(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(Inert(l), "\uFF1C", "&lt;")
	}
	return strings.Join(lines, "\n")
}

// subIssueBody is the body of part (of total) of parent: the part's text, escaped, then ralph's footer,
// which ends with the marker (nothing follows it).
func subIssueBody(sub SubIssue, parent, part, total int) string {
	return fmt.Sprintf("%s\n\n---\nPart %d of %d of #%d, split by ralph's triage.\n%s", escapeBody(sub.Body), part, total, parent, parentMarker(parent, part))
}

// checkSplit says why ralph may not make this split ("" when it may): more parts than split.max, or a
// part GitHub would not take. It is checked before anything is created. The parts' dependencies need no
// bound of their own: a part is blocked only by earlier parts, each once (ParseSplit).
func checkSplit(subs []SubIssue, limit int) string {
	if limit < 2 { // a Config not made by config.Default or Parse
		limit = config.Default().Split.Max
	}
	limit = min(limit, record.MaxChildrenKept)
	if len(subs) > limit {
		return fmt.Sprintf("The triage asked for %d sub-issues; one split may create at most %d (split.max: %d). Nothing was created.", len(subs), limit, limit)
	}
	for i, sub := range subs {
		if n := utf8.RuneCountInString(sub.Title); n > maxIssueTitle {
			return fmt.Sprintf("The title of sub-issue %d is %d characters; GitHub takes at most %d. Nothing was created.", i+1, n, maxIssueTitle)
		}
		if n := len(escapeBody(sub.Body)); n > maxSubIssueBody {
			return fmt.Sprintf("The body of sub-issue %d (%s) is %d characters once escaped; ralph writes at most %d. Nothing was created.", i+1, Inert(sub.Title), n, maxSubIssueBody)
		}
	}
	return ""
}

// SubIssue is one part a triage split an issue into.
type SubIssue struct {
	Title     string
	Body      string
	BlockedBy []int // 1-based numbers of earlier parts that must be done first
}

var (
	subHeading  = regexp.MustCompile(`(?m)^## Sub-issue: *(.+?)\s*$`)
	blockedLine = regexp.MustCompile(`(?mi)^\W{0,3}blocked by:\s*(.+)$`)
)

// ParseSplit reads the "## Sub-issue: <title>" sections of a triage that decided to split an issue, with
// their "Blocked by: 1, 2" lines (the parts, by number, that must be done first).
func ParseSplit(doc string) ([]SubIssue, error) {
	locs := subHeading.FindAllStringSubmatchIndex(doc, -1)
	if len(locs) < 2 {
		return nil, errors.New("a split needs at least two `## Sub-issue: <title>` sections")
	}
	subs := make([]SubIssue, 0, len(locs))
	for i, l := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := doc[l[1]:end]
		if j := regexp.MustCompile(`(?m)^#{1,2} `).FindStringIndex(body); j != nil {
			body = body[:j[0]]
		}
		sub := SubIssue{Title: doc[l[2]:l[3]]}
		for _, m := range blockedLine.FindAllStringSubmatch(body, -1) {
			for _, f := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' || r == '#' }) {
				k, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(f), "part"))
				if err != nil || k < 1 || k > i {
					return nil, fmt.Errorf("sub-issue %d (%q) is blocked by %q: name an earlier part by its number, 1 to %d", i+1, sub.Title, f, i)
				}
				if !slices.Contains(sub.BlockedBy, k) {
					sub.BlockedBy = append(sub.BlockedBy, k)
				}
			}
		}
		sub.Body = strings.TrimSpace(blockedLine.ReplaceAllString(body, ""))
		subs = append(subs, sub)
	}
	return subs, nil
}

// split creates the sub-issues, links them to the parent and to each other, and enrolls them; it returns
// the ones that can start now. A rerun after
// a crash finds the parts it already created by their marker and creates only the rest.
func (r *runner) split(ctx context.Context, rec *Record, subs []SubIssue) ([]int, error) {
	existing := map[int]ghapi.Issue{}
	linked := map[int]bool{}
	kids, err := r.gh.SubIssues(ctx, r.ic.n)
	if err != nil {
		return nil, fmt.Errorf("listing the sub-issues of #%d: %w", r.ic.n, err)
	}
	for _, k := range kids {
		p, part, ok, err := r.people.parentOf(ctx, r.ic, k)
		if err != nil {
			return nil, err
		}
		if ok && p == r.ic.n && part <= len(subs) {
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
			p, part, ok, err := r.people.parentOf(ctx, r.ic, is)
			if err != nil {
				return nil, err
			}
			if _, seen := existing[part]; ok && p == r.ic.n && part <= len(subs) && !seen {
				existing[part] = is
			}
		}
	}
	children := make([]ghapi.Issue, len(subs))
	for k, sub := range subs {
		part := k + 1
		child, ok := existing[part]
		if !ok {
			body := subIssueBody(sub, r.ic.n, part, len(subs))
			if child, err = r.gh.CreateIssue(ctx, ghapi.NewIssue{Title: Inert(sub.Title), Body: body, Labels: []string{workflow.LabelBuild}}); err != nil {
				return nil, fmt.Errorf("creating sub-issue %d: %w", part, err)
			}
			r.w.checkpoint("after-sub-issue")
		}
		if !linked[part] {
			if err := r.gh.AddSubIssue(ctx, r.ic.n, child.ID); err != nil {
				return nil, fmt.Errorf("linking #%d as a sub-issue of #%d: %w", child.Number, r.ic.n, err)
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
	return sealed(triageHeader+fence("markdown", truncate(doc, 60000)), marker)
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
func (r *runner) postTriage(ctx context.Context, doc string) (ghapi.Comment, error) {
	marker := triageMarker(r.ic.rec.Runs)
	return r.w.upsertComment(ctx, marker, triageBody(doc, marker))
}

// postedTriage finds the triage document of this run's triage comment (ralph's own, with the marker of the
// record's run count) when an earlier run posted it and did not record it: a comment written since the
// status comment was last saved, or, before there is one, within the hour in which runs finish a step
// (MaxFinishing). An older one with the same marker is another story (a status comment deleted to start the
// issue over starts the count again).
func (r *runner) postedTriage(ctx context.Context) (string, bool, error) {
	marker := triageMarker(r.ic.rec.Runs)
	i, err := r.people.ownComment(ctx, r.ic, func(b string) bool { return carries(b, marker) })
	if err != nil || i < 0 {
		return "", false, err
	}
	c := r.ic.comments[i]
	at := c.UpdatedAt
	if at.IsZero() {
		at = c.CreatedAt
	}
	switch st := r.ic.status; {
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
func (r *runner) splitDecided(ctx context.Context, rec *Record, doc string) (Outcome, error) {
	subs, err := ParseSplit(doc)
	if err != nil {
		return Outcome{}, &StepError{Step: "triage", Reason: "the triage decided to split the issue, but " + err.Error()}
	}
	marker := triageMarker(r.ic.rec.Runs)
	body := triageBody(doc, marker)
	cm, err := r.w.upsertComment(ctx, marker, body)
	if err != nil {
		return Outcome{}, err
	}
	if why := checkSplit(subs, r.cfg.Split.Max); why != "" {
		rec.SetArtifact("triage", Artifact{Comment: cm.HTMLURL, Verdict: "split: to a person"})
		return Outcome{Person: splitEscalation(r.ic.n, why)}, nil
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
func (r *runner) approvedSplit(ctx context.Context, rec *Record, ps *PendingSplit) (Outcome, error) {
	if ps.ApprovedBy == "" { // the planner does not run the step then; said for a caller that would
		return Outcome{Wait: &Waiting{Paused: true, Message: fmt.Sprintf("#%d waits for a person to approve its split", r.ic.n)}}, nil
	}
	doc, url, found, err := r.heldSplit(ctx, ps)
	if err != nil {
		return Outcome{}, err
	}
	why := fmt.Sprintf("The triage comment whose split @%s approved is gone, or changed since ralph wrote it. Nothing was created.", ps.ApprovedBy)
	var subs []SubIssue
	if found {
		if subs, err = ParseSplit(doc); err != nil {
			why = fmt.Sprintf("The split @%s approved cannot be read back: %v. Nothing was created.", ps.ApprovedBy, err)
		} else {
			why = checkSplit(subs, r.cfg.Split.Max)
		}
	}
	if why != "" {
		rec.Split = nil
		return Outcome{Person: splitEscalation(r.ic.n, why)}, nil
	}
	return r.makeSplit(ctx, rec, subs, url)
}

// heldSplit finds the document of a held split in ralph's triage comment, as ralph wrote it.
func (r *runner) heldSplit(ctx context.Context, ps *PendingSplit) (doc, url string, found bool, err error) {
	for _, c := range r.ic.comments {
		body := strings.TrimSpace(strings.ReplaceAll(c.Body, "\r\n", "\n"))
		if !strings.HasSuffix(body, ps.Marker) || commentDigest(body) != ps.Digest {
			continue
		}
		own, err := r.people.authored(ctx, r.ic, c)
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
func (r *runner) makeSplit(ctx context.Context, rec *Record, subs []SubIssue, comment string) (Outcome, error) {
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
