package record

import (
	"strings"
	"testing"
)

// The status comment lists the required checks not passing on ralph's last commit, their names made inert.
func TestRequiredSection(t *testing.T) {
	got := []RequiredCheck{{Name: "build", State: "passing"}, {Name: "e2e", State: "failing"}, {Name: "lint", State: "pending"}, {Name: "docs", State: "failing"}, {Name: "deploy @mona", State: "missing"}}
	rec := Record{PR: 7, RequiredOn: "0123456789abcdef0123456789abcdef01234567", Required: got}
	body := requiredSection(rec)
	for _, line := range []string{"### Required checks", "- e2e: failing\n", "- lint: pending", "- docs: failing\n", "- deploy ＠mona: missing", "`0123456`"} {
		if !strings.Contains(body, line) {
			t.Errorf("required section lacks %q:\n%s", line, body)
		}
	}
	if strings.Contains(body, "build") || strings.Contains(body, "@mona") {
		t.Errorf("required section names a passing check or a live mention:\n%s", body)
	}
	rec.Required = []RequiredCheck{{Name: "build", State: "passing"}}
	if s := requiredSection(rec); s != "" {
		t.Errorf("all required checks passing, section = %q, want none", s)
	}
}
