package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// parentMarkerPrefix starts the hidden line that ties a sub-issue ralph created to its parent.
const parentMarkerPrefix = "<!-- ralph:parent "

func parentMarker(parent, part int) string {
	return fmt.Sprintf("%s%d part %d -->", parentMarkerPrefix, parent, part)
}

var parentMarkerRE = regexp.MustCompile(`<!-- ralph:parent (\d+) part (\d+) -->`)

// parseParent reads the parent and part of a sub-issue ralph created.
func parseParent(body string) (parent, part int, ok bool) {
	m := parentMarkerRE.FindStringSubmatch(body)
	if m == nil {
		return 0, 0, false
	}
	parent, _ = strconv.Atoi(m[1])
	part, _ = strconv.Atoi(m[2])
	return parent, part, true
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
func (e *Engine) split(ctx context.Context, ic *issue, subs []SubIssue) ([]int, error) {
	existing := map[int]ghapi.Issue{}
	linked := map[int]bool{}
	kids, err := e.GitHub.SubIssues(ctx, ic.n)
	if err != nil {
		return nil, fmt.Errorf("listing the sub-issues of #%d: %w", ic.n, err)
	}
	for _, k := range kids {
		if p, part, ok := parseParent(k.Body); ok && p == ic.n {
			existing[part], linked[part] = k, true
		}
	}
	if len(existing) < len(subs) {
		// A part created just before a crash is not linked yet: look for it among the enrolled issues.
		open, err := e.GitHub.Issues(ctx, ghapi.IssueFilter{State: "all", Labels: []string{workflow.LabelBuild}})
		if err != nil {
			return nil, fmt.Errorf("looking for sub-issues already created: %w", err)
		}
		for _, is := range open {
			if p, part, ok := parseParent(is.Body); ok && p == ic.n {
				if _, seen := existing[part]; !seen {
					existing[part] = is
				}
			}
		}
	}
	children := make([]ghapi.Issue, len(subs))
	for k, sub := range subs {
		part := k + 1
		child, ok := existing[part]
		if !ok {
			body := fmt.Sprintf("%s\n\n---\nPart %d of %d of #%d, split by ralph's triage.\n%s", sub.Body, part, len(subs), ic.n, parentMarker(ic.n, part))
			if child, err = e.GitHub.CreateIssue(ctx, ghapi.NewIssue{Title: sub.Title, Body: body, Labels: []string{workflow.LabelBuild}}); err != nil {
				return nil, fmt.Errorf("creating sub-issue %d: %w", part, err)
			}
			e.checkpoint("after-sub-issue")
		}
		if !linked[part] {
			if err := e.GitHub.AddSubIssue(ctx, ic.n, child.ID); err != nil {
				return nil, fmt.Errorf("linking #%d as a sub-issue of #%d: %w", child.Number, ic.n, err)
			}
		}
		children[k] = child
	}
	ic.rec.Children = nil
	ic.rec.ChildDeps = map[string][]int{}
	for k, sub := range subs {
		child := children[k]
		ic.rec.Children = append(ic.rec.Children, child.Number)
		for _, b := range sub.BlockedBy {
			blocker := children[b-1]
			ic.rec.ChildDeps[strconv.Itoa(child.Number)] = append(ic.rec.ChildDeps[strconv.Itoa(child.Number)], blocker.Number)
			if _, had := existing[k+1]; had {
				continue // created by an earlier run, which linked its dependencies
			}
			if err := e.GitHub.AddBlockedBy(ctx, child.Number, blocker.ID); err != nil && !alreadyExists(err) {
				return nil, fmt.Errorf("recording that #%d is blocked by #%d: %w", child.Number, blocker.Number, err)
			}
		}
	}
	return startable(ic, nil), nil
}

func alreadyExists(err error) bool {
	var ge *ghapi.Error
	return errors.As(err, &ge) && ge.Status == 422 && strings.Contains(strings.ToLower(ge.Message), "already")
}

// childState is a sub-issue's state as its parent sees it: closed is done (or canceled); open, what ralph's
// record of it says. Its labels are a view anyone with triage permission can change, so they are believed
// only while they show what the parent last saw; a sub-issue whose label moved since is read from its
// record (one request, for the sub-issue that moved, which is the one that dispatched the parent).
func (e *Engine) childState(ctx context.Context, ic *issue, k ghapi.Issue) (workflow.State, error) {
	s := labelState(k)
	if k.State == "closed" || s == "" || string(s) == ic.rec.ChildStates[strconv.Itoa(k.Number)] {
		return s, nil
	}
	comments, err := e.GitHub.Comments(ctx, k.Number)
	if err != nil {
		return "", fmt.Errorf("reading the record of sub-issue #%d: %w", k.Number, err)
	}
	child := &issue{n: k.Number, gh: k, comments: comments, trusted: ic.trusted}
	if err := e.findStatus(ctx, child); err != nil {
		return "", err
	}
	ic.trusted = child.trusted
	if child.status == nil {
		return "", nil
	}
	rec, _, err := ParseRecord(child.status.Body)
	if err != nil {
		e.Log.Warnf("#%d: sub-issue #%d: %v", ic.n, k.Number, err)
		return "", nil
	}
	if rec.State != s {
		e.Log.Warnf("#%d: sub-issue #%d's label says %s, its record %s: the record counts", ic.n, k.Number, s.Title(), rec.State.Title())
	}
	return rec.State, nil
}

// labelState is a sub-issue's state as its labels and its open or closed state show it.
func labelState(is ghapi.Issue) workflow.State {
	if st := workflow.StatesFromLabels(is.LabelNames()); len(st) == 1 {
		if is.State == "closed" && st[0] != workflow.Canceled {
			return workflow.Done
		}
		return st[0]
	}
	if is.State == "closed" {
		if is.StateReason == "not_planned" {
			return workflow.Canceled
		}
		return workflow.Done
	}
	return "" // enrolled, not started
}

// startable lists the children that have not started and whose blockers are done: the ones a parent's run
// dispatches. states nil: none has started (just split).
func startable(ic *issue, states map[int]workflow.State) []int {
	done := func(n int) bool { s := states[n]; return s == workflow.Done || s == workflow.Canceled }
	var out []int
	for _, c := range ic.rec.Children {
		if states[c] != "" {
			continue
		}
		ready := true
		for _, b := range ic.rec.ChildDeps[strconv.Itoa(c)] {
			ready = ready && done(b)
		}
		if ready {
			out = append(out, c)
		}
	}
	return out
}

// children is a parent's step: In Review when all its sub-issues are In Review or Done, Done when all are
// Done; otherwise it waits, and starts the sub-issues whose blockers are done.
func (e *Engine) children(ctx context.Context, ic *issue) (Outcome, error) {
	kids, err := e.GitHub.SubIssues(ctx, ic.n)
	if err != nil {
		return Outcome{}, fmt.Errorf("listing the sub-issues of #%d: %w", ic.n, err)
	}
	states := map[int]workflow.State{}
	summary := map[string]string{}
	allDone, allReview := len(kids) > 0, len(kids) > 0
	for _, k := range kids {
		s, err := e.childState(ctx, ic, k)
		if err != nil {
			return Outcome{}, err
		}
		states[k.Number] = s
		summary[strconv.Itoa(k.Number)] = string(s)
		finished := s == workflow.Done || s == workflow.Canceled
		allDone = allDone && finished
		allReview = allReview && (finished || s == workflow.InReview)
	}
	if len(ic.rec.Children) == 0 {
		for _, k := range kids {
			ic.rec.Children = append(ic.rec.Children, k.Number)
		}
	}
	changed := !mapsEqual(summary, ic.rec.ChildStates)
	ic.rec.ChildStates = summary
	out := Outcome{Dispatch: startable(ic, states)}
	switch {
	case allDone:
		out.To = workflow.Done
	case allReview && ic.state == workflow.InProgress:
		out.To = workflow.InReview
	case !changed:
		// Nothing moved: nothing to record.
		out.Wait = &Waiting{Message: fmt.Sprintf("#%d waits for its sub-issues: %s", ic.n, childSummary(ic.rec))}
	}
	// Otherwise the children's new states are recorded; the parent stays where it is.
	return out, nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// childSummary lists the sub-issues and their states: "#4 Done, #5 In Progress".
func childSummary(rec Record) string {
	var parts []string
	for _, c := range rec.Children {
		st := workflow.State(rec.ChildStates[strconv.Itoa(c)])
		title := "not started"
		if st != "" {
			title = st.Title()
		}
		parts = append(parts, fmt.Sprintf("#%d %s", c, title))
	}
	return strings.Join(parts, ", ")
}

// openBlockers lists the open issues that block issue n (one request). The planner asks it only for a
// sub-issue of ralph's before its first step; a sweep, for every issue the listing says is blocked.
func openBlockers(ctx context.Context, gh interface {
	BlockedBy(ctx context.Context, n int) ([]ghapi.Issue, error)
}, n int) ([]int, error) {
	blockers, err := gh.BlockedBy(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("reading what blocks #%d: %w", n, err)
	}
	open := []int{}
	for _, b := range blockers {
		if b.State == "open" {
			open = append(open, b.Number)
		}
	}
	return open, nil
}
