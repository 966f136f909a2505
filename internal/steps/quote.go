package steps

import (
	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// Inert makes text that is not ralph's safe to quote on one line where GitHub acts on what it reads
// (inert.GitHub).
func Inert(s string) string { return inert.GitHub(s) }

// InertText is Inert for text of several lines (inert.GitHubText).
func InertText(s string) string { return inert.GitHubText(s) }

// unmarked makes sure no text in a body ralph composed can pass for one of ralph's markers (inert.Unmarked).
func unmarked(s string) string { return inert.Unmarked(s) }

// fence quotes text as a fenced block that the text cannot close (inert.Fence).
func fence(info, s string) string { return inert.Fence(info, s) }

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
