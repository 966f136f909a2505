package git

import (
	"slices"
	"testing"
)

// GitHub's GH013 answer to a push that breaks repository rules names each rule; the rules are found in it,
// and nothing is found in another refusal.
func TestRuleViolations(t *testing.T) {
	gh013 := "remote: error: GH013: Repository rule violations found for refs/heads/ralph/1-x.        \n" +
		"remote: Review all repository rules at https://github.com/octo/demo/rules?ref=refs%2Fheads%2Fralph%2F1-x        \n" +
		"remote: \n" +
		"remote: - Commits must have verified signatures.        \n" +
		"remote:   Found 1 violation:        \n" +
		"remote: \n" +
		"remote:   0123456789abcdef0123456789abcdef01234567        \n" +
		"remote: \n" +
		"remote: - Cannot update this protected ref.        \n" +
		"remote: \n" +
		"To https://github.com/octo/demo.git\n" +
		" ! [remote rejected] ralph/1-x -> ralph/1-x (push declined due to repository rule violations)\n" +
		"error: failed to push some refs to 'https://github.com/octo/demo.git'\n"
	if got, want := ruleViolations(gh013), []string{"Commits must have verified signatures.", "Cannot update this protected ref."}; !slices.Equal(got, want) {
		t.Errorf("ruleViolations(GH013) = %q, want %q", got, want)
	}
	other := "remote: - not a rule\nTo /tmp/x.git\n ! [remote rejected] a -> a (pre-receive hook declined)\n"
	if got := ruleViolations(other); len(got) != 0 {
		t.Errorf("ruleViolations(another refusal) = %q, want none", got)
	}
}
