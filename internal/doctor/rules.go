package doctor

import (
	"context"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/rules"
)

// RuleReader reads the repository rules that apply to a branch; *ghapi.Client does.
type RuleReader interface {
	BranchRules(ctx context.Context, branch string) ([]ghapi.Rule, error)
}

// Rules lists the repository rules (rulesets) that apply to ralph's branches (w.Branch is one, as ralph
// names them) and to the base, and whether ralph meets each: a rule that would refuse ralph's work is a
// problem with its remedy.
func Rules(ctx context.Context, rr RuleReader, w rules.Work, base string) []Finding {
	var fs []Finding
	rs, err := rr.BranchRules(ctx, w.Branch)
	if err != nil {
		return []Finding{problem("reading the repository's rules for "+w.Branch+": "+err.Error(), "")}
	}
	if len(rs) == 0 {
		fs = append(fs, ok("no repository rule applies to ralph's branches (%s…)", w.Prefix))
	}
	for _, v := range rules.Judge(rs, w) {
		if v.Meets {
			fs = append(fs, ok("rule %s on ralph's branches: met (%s)", v.Name(), v.Why))
		} else {
			fs = append(fs, problem(fmt.Sprintf("rule %s on ralph's branches would refuse ralph's work: %s", v.Name(), v.Why), v.Remedy))
		}
	}
	if base == "" {
		return fs
	}
	bs, err := rr.BranchRules(ctx, base)
	if err != nil {
		return append(fs, problem("reading the repository's rules for "+base+": "+err.Error(), ""))
	}
	for _, r := range bs {
		// ralph never pushes to the base: its rules bind the people who merge ralph's pull requests.
		fs = append(fs, ok("rule %s (ruleset %d of %s) on %s: met (ralph never pushes to %s; it binds merging its pull requests)", r.Type, r.RulesetID, r.Source, base, base))
	}
	return fs
}
