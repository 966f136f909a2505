package githubtest

import (
	"encoding/json"
	"net/http"
	"path"
	"strings"
)

// Repository rules, as GitHub applies them to branches: a test adds rulesets (AddRuleset), GET
// /repos/{owner}/{repo}/rules/branches/{branch} lists every rule of every ruleset whose conditions include
// the branch (whether the branch exists or not), and a push that breaks one of the rules the server enforces
// is refused with GitHub's GH013 answer (see push hook in rules_hook.go).

// Ruleset is a branch ruleset of the repository.
type Ruleset struct {
	ID   int64
	Name string
	// Include and Exclude are ref_name conditions as GitHub takes them: fnmatch patterns of refs
	// ("refs/heads/ralph/**"), "~DEFAULT_BRANCH" or "~ALL".
	Include, Exclude []string
	Rules            []Rule
}

// Rule is one rule of a ruleset: its type and parameters, as GitHub's description spells them.
type Rule struct {
	Type       string
	Parameters map[string]any
}

// AddRuleset adds an active branch ruleset and returns its id.
func (s *Server) AddRuleset(name string, include []string, rules ...Rule) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	rs := Ruleset{ID: s.nextID, Name: name, Include: include, Rules: rules}
	s.rulesets = append(s.rulesets, rs)
	s.writeRulesHookLocked()
	return rs.ID
}

// rulesFor lists the rulesets that apply to branch.
func (s *Server) rulesFor(branch string) []Ruleset {
	var out []Ruleset
	for _, rs := range s.rulesets {
		if refMatches(rs.Include, branch, s.opts.DefaultBranch) && !refMatches(rs.Exclude, branch, s.opts.DefaultBranch) {
			out = append(out, rs)
		}
	}
	return out
}

// refMatches says whether one of patterns takes refs/heads/<branch>.
func refMatches(patterns []string, branch, defaultBranch string) bool {
	ref := "refs/heads/" + branch
	for _, p := range patterns {
		switch p {
		case "~ALL":
			return true
		case "~DEFAULT_BRANCH":
			if branch == defaultBranch {
				return true
			}
			continue
		}
		if globMatch(p, ref) {
			return true
		}
	}
	return false
}

// globMatch is GitHub's fnmatch for ref conditions: "*" within a segment, "**" across segments.
func globMatch(pattern, ref string) bool {
	if before, after, ok := strings.Cut(pattern, "**"); ok {
		if !strings.HasPrefix(ref, before) {
			return false
		}
		rest := ref[len(before):]
		for i := 0; i <= len(rest); i++ {
			if globMatch(after, rest[i:]) {
				return true
			}
		}
		return false
	}
	ok, _ := path.Match(pattern, ref)
	return ok
}

func (s *Server) getBranchRules(c *call) (int, any) {
	items := []map[string]any{}
	for _, rs := range s.rulesFor(c.params["branch"]) {
		for _, r := range rs.Rules {
			item := map[string]any{"type": r.Type, "ruleset_id": rs.ID,
				"ruleset_source": s.opts.Owner + "/" + s.opts.Repo, "ruleset_source_type": "Repository"}
			if r.Parameters != nil {
				// Through JSON, so that the answer holds what a test's Go values encode to.
				b, _ := json.Marshal(r.Parameters)
				var p any
				_ = json.Unmarshal(b, &p)
				item["parameters"] = p
			}
			items = append(items, item)
		}
	}
	return http.StatusOK, items
}
