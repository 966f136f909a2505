package config

import (
	"fmt"
	"strings"
)

// Branch names: what git accepts as one, for base_branch and branch_prefix and for the branch a record names.

// checkRefPart says why s cannot start a git branch name, or "". These are
// the rules of git check-ref-format that a prefix can break; the rest of the
// name (issue number and slug) is ralph's to get right.
func checkRefPart(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' {
			return "it contains a space or a control character"
		}
		if strings.ContainsRune("~^:?*[\\", r) {
			return fmt.Sprintf("it contains %q, which git does not allow in branch names", r)
		}
	}
	switch {
	case strings.Contains(s, ".."):
		return `it contains ".."`
	case strings.Contains(s, "@{"):
		return `it contains "@{"`
	case strings.Contains(s, "//"):
		return `it contains "//"`
	case strings.HasPrefix(s, "/"):
		return `it starts with "/"`
	case strings.HasPrefix(s, "-"):
		return `it starts with "-"`
	}
	for _, part := range strings.Split(s, "/") {
		if strings.HasPrefix(part, ".") {
			return `a part of it starts with "."`
		}
	}
	// Only a finished component can end in ".lock"; the last one goes on
	// with the issue number.
	parts := strings.Split(s, "/")
	for _, part := range parts[:len(parts)-1] {
		if strings.HasSuffix(part, ".lock") {
			return `a part of it ends with ".lock"`
		}
	}
	return ""
}

// CheckBranch says why s cannot be a git branch name, or "" when it can: the base_branch key's check, and
// the engine's of a branch a record names.
func CheckBranch(s string) string {
	if why := checkRefPart(s); why != "" {
		return why
	}
	switch {
	case s == "@":
		return `"@" alone is not a branch`
	case strings.HasSuffix(s, "/"):
		return `it ends with "/"`
	case strings.HasSuffix(s, "."):
		return `it ends with "."`
	case strings.HasSuffix(s, ".lock"):
		return `it ends with ".lock"`
	}
	return ""
}
