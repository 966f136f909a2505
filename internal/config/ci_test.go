package config

import (
	"errors"
	"strings"
	"testing"
)

func TestCIMaxFixes(t *testing.T) {
	t.Parallel()
	if got := Default().CI.MaxFixes; got != 2 {
		t.Errorf("default ci.max_fixes = %d, want 2", got)
	}
	valid := []struct {
		yaml string
		want int
	}{
		{"ci:\n  max_fixes: 0\n", 0}, // never fix CI: failing checks go to a person at once
		{"ci:\n  max_fixes: 5\n", 5},
		{"ci:\n", 2},
		{"review: auto\n", 2},
	}
	for _, tt := range valid {
		c, err := Parse(DefaultPath, []byte(tt.yaml))
		if err != nil || c.CI.MaxFixes != tt.want {
			t.Errorf("%q: max_fixes %d, %v; want %d", tt.yaml, c.CI.MaxFixes, err, tt.want)
		}
	}
	invalid := []struct {
		name, yaml   string
		line, column int
		key, msg     string
	}{
		{"negative", "ci:\n  max_fixes: -1\n", 2, 14, "ci.max_fixes", "must be 0 or more, not -1"},
		{"a word", "ci:\n  max_fixes: two\n", 2, 14, "ci.max_fixes", "must be a whole number"},
		{"a fraction", "ci:\n  max_fixes: 1.5\n", 2, 14, "ci.max_fixes", "must be a whole number"},
		{"an unknown key", "ci:\n  retries: 3\n", 2, 3, "ci.retries", "(known keys under ci: max_fixes)"},
		{"not a mapping", "ci: 3\n", 1, 5, "ci", "must be a mapping with the keys max_fixes"},
	}
	for _, tt := range invalid {
		_, err := Parse(DefaultPath, []byte(tt.yaml))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want a config error", tt.name, err)
			continue
		}
		if e.Line != tt.line || e.Column != tt.column || e.Key != tt.key || !strings.Contains(e.Error(), tt.msg) {
			t.Errorf("%s: %s at %d:%d (%s); want %q at %d:%d (%s)", tt.name, e, e.Line, e.Column, e.Key, tt.msg, tt.line, tt.column, tt.key)
		}
	}
}
