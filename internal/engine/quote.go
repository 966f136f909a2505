package engine

import (
	"regexp"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// Inert makes text that is not ralph's safe to quote on one line where GitHub acts on what it reads
// (inert.GitHub).
func Inert(s string) string { return inert.GitHub(s) }

// InertText is Inert for text of several lines (inert.GitHubText).
func InertText(s string) string { return inert.GitHubText(s) }

// unmarked makes sure no text in a body ralph composed can pass for one of ralph's markers (inert.Unmarked).
func unmarked(s string) string { return inert.Unmarked(s) }

// fence quotes text as a fenced block that the text cannot close: the fence is longer than any run of
// backticks in it.
func fence(info, s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + info + "\n" + s + "\n" + f
}

// slugReference finds "gh-" before a number in a slug: GH-2 is a reference to issue 2 wherever GitHub
// meets it, a branch name in a merge commit's message included.
var slugReference = regexp.MustCompile(`(^|-)gh-(\d)`)

// inertSlug drops what would make a reference of a slug (only letters, digits and dashes are left in it, so
// "gh-N" is the one form there is).
func inertSlug(s string) string {
	for slugReference.MatchString(s) {
		s = slugReference.ReplaceAllString(s, "$1$2")
	}
	return s
}

// link is a URL ralph was told as the target of a Markdown link (inert.Link).
func link(u string) string { return inert.Link(u) }

// short is a commit id as people read it: its first seven characters.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// ownCode writes a name ralph made in a code span (inert.Code).
func ownCode(s string) string { return inert.Code(s) }
