package githubtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The rules endpoint lists the rules of the rulesets whose conditions take the branch, existing or not, in the
// shape GitHub's description gives (the server checks its answer against it).
func TestBranchRules(t *testing.T) {
	s := New(t, Options{})
	id := s.AddRuleset("signed", []string{"refs/heads/ralph/**"}, Rule{Type: "required_signatures"},
		Rule{Type: "commit_message_pattern", Parameters: map[string]any{"operator": "starts_with", "pattern": "JIRA-"}})
	s.AddRuleset("base", []string{"~DEFAULT_BRANCH"}, Rule{Type: "required_linear_history"})
	for _, tt := range []struct {
		branch string
		want   []string
	}{
		{"ralph/1-greet", []string{"required_signatures", "commit_message_pattern"}},
		{"main", []string{"required_linear_history"}},
		{"feature", nil},
	} {
		r := do(t, s, "GET", "/repos/octo/demo/rules/branches/"+tt.branch, nil)
		if r.status != 200 {
			t.Fatalf("GET rules for %s: %d %s", tt.branch, r.status, r.body)
		}
		var got []struct {
			Type       string         `json:"type"`
			RulesetID  int64          `json:"ruleset_id"`
			Parameters map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, g := range got {
			types = append(types, g.Type)
		}
		if strings.Join(types, ",") != strings.Join(tt.want, ",") {
			t.Errorf("rules for %s: %v, want %v", tt.branch, types, tt.want)
		}
		if tt.branch == "ralph/1-greet" && (got[0].RulesetID != id || got[1].Parameters["pattern"] != "JIRA-") {
			t.Errorf("rules for %s: %+v, want ruleset %d and its parameters", tt.branch, got, id)
		}
	}
}

// A push that breaks a rule is refused with GitHub's GH013 answer, naming the rule; one that keeps them lands.
func TestRulesRefusePush(t *testing.T) {
	s := New(t, Options{})
	s.AddRuleset("ralph", []string{"refs/heads/ralph/**"},
		Rule{Type: "required_signatures"},
		Rule{Type: "file_path_restriction", Parameters: map[string]any{"restricted_file_paths": []string{"secret/**"}}})
	dir := t.TempDir()
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := git("clone", "-q", s.BareRepo, "c"); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "c", "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-C", "c", "add", "new.txt"}, {"-C", "c", "commit", "-q", "-m", "new"}} {
		if out, err := git(args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := git("-C", "c", "push", "origin", "HEAD:refs/heads/ralph/1-x")
	if err == nil || !strings.Contains(out, "GH013: Repository rule violations found for refs/heads/ralph/1-x") ||
		!strings.Contains(out, "- Commits must have verified signatures.") {
		t.Errorf("an unsigned push to ralph/1-x: err %v, want GH013 naming the signature rule:\n%s", err, out)
	}
	if s.branchSHA("ralph/1-x") != "" {
		t.Error("the refused push created the branch")
	}
	// The same commit to a branch no ruleset takes lands.
	if out, err := git("-C", "c", "push", "origin", "HEAD:refs/heads/topic"); err != nil {
		t.Errorf("a push to topic: %v\n%s", err, out)
	}
}
