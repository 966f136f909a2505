package ghapi

import (
	"context"
	"encoding/json"
)

// Rule is one repository rule that applies to a branch, from a ruleset of the repository or of its
// organization: its type (required_signatures, branch_name_pattern, …), its parameters as GitHub gives
// them (decoded by whoever judges the rule), and which ruleset holds it.
type Rule struct {
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	RulesetID  int64           `json:"ruleset_id"`
	Source     string          `json:"ruleset_source"`      // the repository or organization that holds the ruleset
	SourceType string          `json:"ruleset_source_type"` // Repository or Organization
}

// BranchRules reads every active rule that applies to branch (which need not exist yet): one request,
// two only when a branch has more than 100 rules.
func (c *Client) BranchRules(ctx context.Context, branch string) ([]Rule, error) {
	return list[Rule](ctx, c, c.repoPath("rules", "branches")+"/"+escapeRef(branch)+"?per_page=100")
}
