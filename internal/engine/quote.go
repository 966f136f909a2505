package engine

import (
	"regexp"
	"strings"
)

// GitHub acts on what it finds in the text of pull requests, commits and comments: `fixes #2` (or `GH-2`,
// `owner/repo#2`, an issue's URL) closes issue 2 when the change is merged, any of them links the two, and
// `@name` notifies someone. An issue's title is chosen by whoever opened the issue, so text ralph quotes from
// an issue must not be able to do any of that. Inert swaps the one character that makes each such reference
// for its full-width twin, which reads the same and which GitHub does not parse.
var (
	issueNumberRef = regexp.MustCompile(`#(\d)`)
	ghNumberRef    = regexp.MustCompile(`(?i)\b(gh)-(\d)`)
	mentionRef     = regexp.MustCompile(`(^|\W)@(\w)`)
	schemeRef      = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*):(//)`)
)

// Inert makes text from an issue (a title) or from the agent (a phase's title) safe to quote where GitHub
// acts on references: no closing keyword for another issue, no cross-reference, no @-mention and no link
// survive in it. ralph writes the one closing keyword it means, for the issue itself, around such text.
func Inert(s string) string {
	s = issueNumberRef.ReplaceAllString(s, "\uFF03$1") // ＃2
	s = ghNumberRef.ReplaceAllString(s, "$1\u2011$2")  // GH‑2, a non-breaking hyphen
	s = mentionRef.ReplaceAllString(s, "$1\uFF20$2")   // ＠name
	s = schemeRef.ReplaceAllString(s, "$1\uFF1A$2")    // https：//…
	// One line: a title that broke a commit's subject would make the rest of it the message's body.
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
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
