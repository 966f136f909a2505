package engine

import "github.com/ralph-dev/gh-ralph/internal/inert"

// Inert makes text that is not ralph's safe to quote on one line where GitHub acts on what it reads
// (inert.GitHub).
func Inert(s string) string { return inert.GitHub(s) }

// InertText is Inert for text of several lines (inert.GitHubText).
func InertText(s string) string { return inert.GitHubText(s) }
