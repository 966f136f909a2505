package plantext

import (
	"regexp"
	"strings"
)

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
