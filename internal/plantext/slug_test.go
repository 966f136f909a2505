package plantext

import (
	"strings"
	"testing"
)

func TestSlugFormsNoReference(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Add a greeting", "add-a-greeting"},
		{"Add a greeting, fixes #2 and GH-3", "add-a-greeting-fixes-2-and-3"},
		{"gh-1 gh-2 first", "1-2-first"},
		{"Use the gh CLI", "use-the-gh-cli"},
		{"cc @mona", "cc-mona"},
	}
	for _, tt := range tests {
		if got := Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"Add a greeting":            "add-a-greeting",
		"  Fix: crash on ÜTF-8!! ":  "fix-crash-on-tf-8",
		"":                          "issue",
		"!!!":                       "issue",
		strings.Repeat("word ", 20): "word-word-word-word-word-word-word-word",
	}
	for in, want := range tests {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
