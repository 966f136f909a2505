package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

func rule(typ string, params map[string]any) ghapi.Rule {
	r := ghapi.Rule{Type: typ, RulesetID: 7, Source: "octo/demo"}
	if params != nil {
		r.Parameters, _ = json.Marshal(params)
	}
	return r
}

// Each rule that would refuse ralph's work is refused with what to change; each that would not is met.
func TestJudge(t *testing.T) {
	work := Work{
		Branch: "ralph/12-add-a-greeting", Prefix: "ralph/",
		Messages: []string{"ralph: research for #12 Add a greeting\n\nRalph-Step: research", "ralph: Phase 1 of 2: #12 Greet"},
		Paths:    []string{"thoughts/shared/research/2026-11-28-GH-0012-add-a-greeting.md"},
		Signing:  "the Actions token's commits are not signed",
	}
	signed := work
	signed.Signed, signed.Signing = true, "ssh key"
	for _, tt := range []struct {
		name   string
		rule   ghapi.Rule
		work   Work
		meets  bool
		remedy string // a part of the remedy
	}{
		{"creation", rule("creation", nil), work, false, "bypass list"},
		{"update", rule("update", nil), work, false, "exclude ralph/*"},
		{"deletion", rule("deletion", nil), work, true, ""},
		{"linear history", rule("required_linear_history", nil), work, true, ""},
		{"signatures unsigned", rule("required_signatures", nil), work, false, "commit.gpgsign"},
		{"signatures signed", rule("required_signatures", nil), signed, true, ""},
		{"branch name met", rule("branch_name_pattern", map[string]any{"operator": "starts_with", "pattern": "ralph/"}), work, true, ""},
		{"branch name refused", rule("branch_name_pattern", map[string]any{"operator": "regex", "pattern": "^(feature|fix)/"}), work, false, "branch_prefix"},
		{"branch name negated", rule("branch_name_pattern", map[string]any{"operator": "contains", "pattern": "ralph", "negate": true}), work, false, "branch_prefix"},
		{"message met", rule("commit_message_pattern", map[string]any{"operator": "contains", "pattern": "#12"}), work, true, ""},
		{"message refused", rule("commit_message_pattern", map[string]any{"operator": "starts_with", "pattern": "JIRA-"}), work, false, "ralph: "},
		{"bad regex", rule("commit_message_pattern", map[string]any{"operator": "regex", "pattern": "(?<=x)"}), work, false, "bypass"},
		{"path refused", rule("file_path_restriction", map[string]any{"restricted_file_paths": []string{"thoughts/**"}}), work, false, "documents:"},
		{"path folder refused", rule("file_path_restriction", map[string]any{"restricted_file_paths": []string{"thoughts/shared"}}), work, false, "documents:"},
		{"path met", rule("file_path_restriction", map[string]any{"restricted_file_paths": []string{"secrets/**", ".github/**"}}), work, true, ""},
		{"extension refused", rule("file_extension_restriction", map[string]any{"restricted_file_extensions": []string{"*.md"}}), work, false, ".md"},
		{"extension met", rule("file_extension_restriction", map[string]any{"restricted_file_extensions": []string{".exe"}}), work, true, ""},
		{"size", rule("max_file_size", map[string]any{"max_file_size": 1}), work, true, ""},
		{"pull request", rule("pull_request", map[string]any{"required_approving_review_count": 1}), work, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vs := Judge([]ghapi.Rule{tt.rule}, tt.work)
			if len(vs) != 1 {
				t.Fatalf("Judge gave %d verdicts, want 1", len(vs))
			}
			v := vs[0]
			if v.Meets != tt.meets {
				t.Fatalf("Meets = %v (%s), want %v", v.Meets, v.Why, tt.meets)
			}
			if !tt.meets && (!strings.Contains(v.Remedy, tt.remedy) || v.Why == "") {
				t.Errorf("refusal says why %q, remedy %q; want a reason and a remedy with %q", v.Why, v.Remedy, tt.remedy)
			}
			if got := len(Refusals(vs)); got != map[bool]int{true: 0, false: 1}[tt.meets] {
				t.Errorf("Refusals: %d", got)
			}
		})
	}
}

// The checks a base's rules require are their required_status_checks contexts, each once.
func TestRequiredChecks(t *testing.T) {
	rs := []ghapi.Rule{
		{Type: "required_status_checks", Parameters: json.RawMessage(`{"strict_required_status_checks_policy":true,"required_status_checks":[{"context":"build"},{"context":"lint","integration_id":15368}]}`)},
		{Type: "creation"},
		{Type: "required_status_checks", Parameters: json.RawMessage(`{"required_status_checks":[{"context":"lint"},{"context":"e2e"}]}`)},
	}
	if got, want := RequiredChecks(rs), []string{"build", "lint", "e2e"}; !slices.Equal(got, want) {
		t.Errorf("RequiredChecks = %q, want %q", got, want)
	}
}
