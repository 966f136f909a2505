// Package rules judges a repository's branch rules (GitHub rulesets) against the work ralph is about to do:
// which rule would refuse it, and what a maintainer changes so that it does not. It is pure: the rules are
// read by the caller (ghapi.Client.BranchRules).
package rules

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// Work is what ralph will do on its branch.
type Work struct {
	Branch   string   // the branch ralph pushes to (which may not exist yet)
	Prefix   string   // branch_prefix, for the remedy
	Messages []string // the commit messages ralph will write
	Paths    []string // the files ralph itself writes (its documents)
	// Signed says whether GitHub will find ralph's commits signed; Signing says how (for the verdict).
	Signed  bool
	Signing string
}

// Verdict is one rule judged: Meets is false when the rule would refuse ralph's work, and Remedy then says
// what to change.
type Verdict struct {
	Rule   ghapi.Rule
	Meets  bool
	Why    string
	Remedy string
}

// Name names the rule and its ruleset for a person.
func (v Verdict) Name() string {
	return fmt.Sprintf("%s (ruleset %d of %s)", v.Rule.Type, v.Rule.RulesetID, v.Rule.Source)
}

// Judge judges every rule that applies to ralph's branch.
func Judge(rs []ghapi.Rule, w Work) []Verdict {
	out := make([]Verdict, 0, len(rs))
	for _, r := range rs {
		out = append(out, judge(r, w))
	}
	return out
}

// Refusals are the verdicts that do not meet their rule.
func Refusals(vs []Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if !v.Meets {
			out = append(out, v)
		}
	}
	return out
}

// pattern is the parameters of a *_pattern rule.
type pattern struct {
	Name     string `json:"name"`
	Negate   bool   `json:"negate"`
	Operator string `json:"operator"`
	Pattern  string `json:"pattern"`
}

// matches says whether text meets the rule: it matches the pattern, or does not when the rule negates it.
func (p pattern) matches(text string) (bool, error) {
	var m bool
	switch p.Operator {
	case "starts_with":
		m = strings.HasPrefix(text, p.Pattern)
	case "ends_with":
		m = strings.HasSuffix(text, p.Pattern)
	case "contains":
		m = strings.Contains(text, p.Pattern)
	case "regex":
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return false, fmt.Errorf("its pattern %q is not a regular expression ralph can read: %w", p.Pattern, err)
		}
		m = re.MatchString(text)
	default:
		return false, fmt.Errorf("its operator %q is unknown to ralph", p.Operator)
	}
	return m != p.Negate, nil
}

func (p pattern) String() string {
	s := strings.ReplaceAll(p.Operator, "_", " ") + " " + fmt.Sprintf("%q", p.Pattern)
	if p.Negate {
		s = "not " + s
	}
	return s
}

func judge(r ghapi.Rule, w Work) Verdict {
	v := Verdict{Rule: r, Meets: true}
	refuse := func(why, remedy string) Verdict {
		v.Meets, v.Why, v.Remedy = false, why, remedy
		return v
	}
	bypass := fmt.Sprintf("exclude %s* from the ruleset's branches, or add ralph's identity (the Actions token's GitHub App, or your account) to its bypass list", w.Prefix)
	switch r.Type {
	case "creation":
		return refuse("ralph creates a branch for each issue, and this rule forbids creating "+w.Branch, bypass)
	case "update":
		return refuse("ralph pushes each step's commits to "+w.Branch+", and this rule forbids updating it", bypass)
	case "deletion", "non_fast_forward":
		v.Why = "ralph neither deletes nor force-pushes its branches"
	case "required_linear_history":
		v.Why = "ralph's commits are one line on top of the base (it makes no merge commits)"
	case "required_signatures":
		if !w.Signed {
			return refuse("ralph's commits would not be signed ("+w.Signing+")",
				"sign ralph's commits (on a laptop: git config commit.gpgsign true with gpg.format and user.signingkey; GitHub must know the key), or "+bypass)
		}
		v.Why = "ralph's commits are signed (" + w.Signing + ")"
	case "branch_name_pattern":
		var p pattern
		if err := json.Unmarshal(r.Parameters, &p); err != nil {
			return refuse("ralph cannot read its parameters: "+err.Error(), bypass)
		}
		ok, err := p.matches(w.Branch)
		if err != nil {
			return refuse(err.Error(), bypass)
		}
		if !ok {
			return refuse(fmt.Sprintf("branch names must %s, and ralph's branch is %q", p, w.Branch),
				fmt.Sprintf("set branch_prefix in .github/ralph.yml so that ralph's branches (prefix, issue number, slug) %s, or %s", p, bypass))
		}
		v.Why = fmt.Sprintf("%q %s", w.Branch, p)
	case "commit_message_pattern":
		var p pattern
		if err := json.Unmarshal(r.Parameters, &p); err != nil {
			return refuse("ralph cannot read its parameters: "+err.Error(), bypass)
		}
		for _, m := range w.Messages {
			ok, err := p.matches(m)
			if err != nil {
				return refuse(err.Error(), bypass)
			}
			if !ok {
				subject, _, _ := strings.Cut(m, "\n")
				return refuse(fmt.Sprintf("commit messages must %s, and ralph writes messages such as %q", p, subject),
					"change the rule so that it takes messages starting \"ralph: \", or "+bypass)
			}
		}
		v.Why = "ralph's commit messages " + p.String()
	case "file_path_restriction":
		var p struct {
			Paths []string `json:"restricted_file_paths"`
		}
		_ = json.Unmarshal(r.Parameters, &p)
		for _, f := range w.Paths {
			for _, g := range p.Paths {
				if pathMatch(g, f) {
					return refuse(fmt.Sprintf("ralph writes %s, and the rule restricts %q", f, g),
						"remove thoughts/ from the restricted paths, or keep ralph's documents out of the branch (documents: in .github/ralph.yml), or "+bypass)
				}
			}
		}
		v.Why = "ralph's documents are outside the restricted paths; a change of the agent's under them fails its step"
	case "file_extension_restriction":
		var p struct {
			Exts []string `json:"restricted_file_extensions"`
		}
		_ = json.Unmarshal(r.Parameters, &p)
		for _, f := range w.Paths {
			for _, e := range p.Exts {
				if strings.HasSuffix(f, "."+strings.TrimLeft(e, "*.")) {
					return refuse(fmt.Sprintf("ralph writes %s, and the rule restricts %q files", f, e),
						"remove "+e+" from the restricted extensions, or "+bypass)
				}
			}
		}
		v.Why = "ralph's documents have no restricted extension; a change of the agent's with one fails its step"
	case "max_file_size", "max_file_path_length":
		v.Why = "ralph's documents are small and their paths short; a change of the agent's past the limit fails its step"
	case "pull_request", "required_status_checks", "merge_queue", "required_deployments", "code_scanning",
		"code_quality", "copilot_code_review", "workflows":
		v.Why = "applies to merging into the branch, which ralph leaves to people"
	default:
		v.Why = "ralph does not judge this rule; GitHub answers a push that breaks it with GH013, which ralph reports"
	}
	return v
}

// pathMatch is fnmatch as rulesets use it for file paths: "*" within a segment, "**" across segments, and a
// pattern with no wildcard names a file or a folder.
func pathMatch(pattern, file string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		return file == pattern || strings.HasPrefix(file, strings.TrimSuffix(pattern, "/")+"/")
	}
	if before, after, ok := strings.Cut(pattern, "**"); ok {
		if !strings.HasPrefix(file, before) {
			return false
		}
		after = strings.TrimPrefix(after, "/")
		if after == "" {
			return true
		}
		rest := file[len(before):]
		for i := 0; i <= len(rest); i++ {
			if (i == 0 || rest[i-1] == '/') && pathMatch(after, rest[i:]) {
				return true
			}
		}
		return false
	}
	ok, _ := path.Match(pattern, file)
	return ok
}

// RequiredChecks lists the status checks the rules require (their required_status_checks rules' contexts),
// each once, in the rules' order.
func RequiredChecks(rs []ghapi.Rule) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Type != "required_status_checks" {
			continue
		}
		var p struct {
			Checks []struct {
				Context string `json:"context"`
			} `json:"required_status_checks"`
		}
		if json.Unmarshal(r.Parameters, &p) != nil {
			continue
		}
		for _, c := range p.Checks {
			if c.Context != "" && !seen[c.Context] {
				seen[c.Context] = true
				out = append(out, c.Context)
			}
		}
	}
	return out
}
