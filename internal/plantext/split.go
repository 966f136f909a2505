package plantext

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// parentMarkerPrefix starts the hidden line that ties a sub-issue ralph created to its parent.
const parentMarkerPrefix = "<!-- ralph:parent "

func parentMarker(parent, part int) string {
	return fmt.Sprintf("%s%d part %d -->", parentMarkerPrefix, parent, part)
}

// parentMarkerRE is the marker where ralph writes it: the last line of the body, alone on its line. The
// agent's text above it is escaped (SubIssueBody) so that it holds no "<!--" of its own, and a marker
// anywhere else is no marker.
var parentMarkerRE = regexp.MustCompile(`(?:\A|\n)<!-- ralph:parent ([1-9]\d{0,9}) part ([1-9]\d{0,5}) -->\n?\z`)

// ParseParent reads the parent and part of a sub-issue ralph created from the end of its body. Only a body
// ralph wrote counts: the caller checks who opened the issue (anyone can open one whose body ends with a
// marker).
func ParseParent(body string) (parent, part int, ok bool) {
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

// RalphsSubIssue says whether an issue opened by author with body is a sub-issue ralph opened as bot (its
// triage's split): ralph opened it, and its body ends with ralph's parent marker as ralph writes it. Anyone
// can open an issue whose body carries the marker, and another workflow's Actions token can label it.
func RalphsSubIssue(body, author, bot string) bool {
	_, _, ok := ParseParent(body)
	return ok && author == bot
}

// Limits of what GitHub takes in an issue (characters; bytes are counted, which is never fewer).
const (
	maxIssueTitle = 256
	// maxSubIssueBody leaves room under GitHub's 65536 for the footer ralph adds.
	maxSubIssueBody = 60000
)

// escapeBody makes agent text that ralph puts in an issue body inert: each line as inert.GitHub makes a
// title (no reference, mention, link or character reference), and every "<" (which it writes "＜") as
// "&lt;", which GitHub shows as "<" but which opens no HTML comment or tag, so that the text can neither
// hide anything nor carry a marker of ralph's.
func escapeBody(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(inert.GitHub(l), "\uFF1C", "&lt;")
	}
	return strings.Join(lines, "\n")
}

// SubIssueBody is the body of part (of total) of parent: the part's text, escaped, then ralph's footer,
// which ends with the marker (nothing follows it).
func SubIssueBody(sub SubIssue, parent, part, total int) string {
	return fmt.Sprintf("%s\n\n---\nPart %d of %d of #%d, split by ralph's triage.\n%s", escapeBody(sub.Body), part, total, parent, parentMarker(parent, part))
}

// CheckSplit says why ralph may not make this split ("" when it may): more parts than split.max, or a
// part GitHub would not take. It is checked before anything is created. The parts' dependencies need no
// bound of their own: a part is blocked only by earlier parts, each once (ParseSplit).
func CheckSplit(subs []SubIssue, limit int) string {
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
			return fmt.Sprintf("The body of sub-issue %d (%s) is %d characters once escaped; ralph writes at most %d. Nothing was created.", i+1, inert.GitHub(sub.Title), n, maxSubIssueBody)
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
