package e2e

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// A repository whose rulesets would refuse ralph's work: ralph reads the rules of its branch before the agent
// runs and stops, naming the rule and what to change, with no agent run and the issue as it was. (Required
// signatures the Action meets, as GitHub signs its commits: TestSignedCommitsFlow; unsigned on a laptop, it
// is refused up front: TestCLISSHSigning.)
func TestRulesRefusedUpFront(t *testing.T) {
	t.Parallel()
	pattern := func(typ, op, p string) githubtest.Rule {
		return githubtest.Rule{Type: typ, Parameters: map[string]any{"operator": op, "pattern": p}}
	}
	tests := []struct {
		name    string
		include string
		rule    githubtest.Rule
		want    []string // in the run's output
	}{
		{"branch name", "~ALL", pattern("branch_name_pattern", "regex", "^(feature|fix)/"),
			[]string{"branch_name_pattern (ruleset", `ralph's branch is "ralph/1-add-a-greeting"`, "to fix: set branch_prefix in .github/ralph.yml"}},
		{"creation", "refs/heads/ralph/**", githubtest.Rule{Type: "creation"},
			[]string{"creation (ruleset", "forbids creating ralph/1-add-a-greeting", "bypass list"}},
		{"update", "refs/heads/ralph/**", githubtest.Rule{Type: "update"},
			[]string{"update (ruleset", "forbids updating it", "exclude ralph/*"}},
		{"commit message", "refs/heads/ralph/**", pattern("commit_message_pattern", "starts_with", "JIRA-"),
			[]string{"commit_message_pattern (ruleset", `commit messages must starts with "JIRA-"`, "ralph: research for #1 Add a greeting"}},
		{"file path", "refs/heads/ralph/**", githubtest.Rule{Type: "file_path_restriction", Parameters: map[string]any{"restricted_file_paths": []string{"thoughts/**"}}},
			[]string{"file_path_restriction (ruleset", "thoughts/shared/research/", "remove thoughts/ from the restricted paths"}},
		{"file extension", "refs/heads/ralph/**", githubtest.Rule{Type: "file_extension_restriction", Parameters: map[string]any{"restricted_file_extensions": []string{"*.md"}}},
			[]string{"file_extension_restriction (ruleset", `restricts "*.md" files`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, baseConfig(t, ""))
			e.srv.AddRuleset("org policy", []string{tt.include}, tt.rule)
			n := e.srv.CreateIssue("octocat", "Add a greeting", "")
			r := e.label(n, maintainer)
			out := r.stdout + r.stderr
			if r.exit != 1 || !strings.Contains(out, "the repository's rules would refuse ralph's work on ralph/1-add-a-greeting, so nothing was run or changed") {
				t.Fatalf("exit %d, want 1 and the rules named:\n%s", r.exit, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			e.untouched(n)
			if e.branchExists("ralph/1-add-a-greeting") {
				t.Error("ralph's branch was pushed")
			}
		})
	}
}

// A push GitHub still refuses for a rule ralph could not judge up front (a path the agent changed) fails the
// step with GitHub's GH013 answer: the rule and what to change; it is counted once and not tried again (the
// same push meets the same rule): a person is needed.
func TestRulesRefusedPush(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: skip\n"))
	e.srv.AddRuleset("no features", []string{"refs/heads/ralph/**"},
		githubtest.Rule{Type: "file_path_restriction", Parameters: map[string]any{"restricted_file_paths": []string{"feature-*.txt"}}})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("research: exit %d\n%s", r.exit, r.stdout)
	}
	runs := e.chain(5)
	last := runs[len(runs)-1]
	if last.outputs["step"] != "implement" || last.exit != 1 {
		t.Fatalf("the last run: step %q, exit %d, want a failed implement step reported\n%s", last.outputs["step"], last.exit, last.stdout)
	}
	e.wantState(n, workflow.HumanNeeded)
	rec := e.record(n)
	if inv := e.invocations(); len(inv) != 3 {
		t.Errorf("agent invocations %q, want research, plan and one implement", inv)
	}
	if rec.Failures != 1 || rec.FailedStep != workflow.Implement {
		t.Errorf("record: %d failures of %q, want 1 of implement", rec.Failures, rec.FailedStep)
	}
	var failure string
	for _, c := range e.srv.Comments(n) {
		if strings.Contains(c.Body, "GH013") {
			failure = c.Body
		}
	}
	for _, w := range []string{"GitHub refused the push to ralph/1-add-a-greeting: it breaks the repository's rules (GH013)", "Cannot change restricted file paths.", "`gh ralph doctor` lists the rules"} {
		if !strings.Contains(failure, w) {
			t.Errorf("no comment says %q:\n%s", w, failure)
		}
	}
	if refs := e.git(e.srv.BareRepo, "for-each-ref", "refs/ralph/objects/"); refs != "" {
		t.Errorf("refs left under refs/ralph/objects/:\n%s", refs)
	}
	if strings.Contains(last.stdout, "pushing the work committed before the stop") {
		t.Errorf("ralph pushed the refused commit again:\n%s", last.stdout)
	}
	if e.branchExists(branch) && strings.Contains(strings.Join(func() []string { _, f := e.branch(branch); return f }(), " "), "feature-1.txt") {
		t.Error("the refused phase is on ralph's branch")
	}
}

// The rules are read before ralph's first push to its branch, not by every step: a rule added later refuses
// the next push (GH013), and the person's retry reads the rules first, so it stops before the agent runs,
// naming the rule and its remedy.
func TestRulesReadAgainAfterRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("research: exit %d\n%s", r.exit, r.stdout)
	}
	e.srv.AddRuleset("jira", []string{"refs/heads/ralph/**"},
		githubtest.Rule{Type: "commit_message_pattern", Parameters: map[string]any{"operator": "starts_with", "pattern": "JIRA-"}})
	reads := func() int {
		c := 0
		for _, r := range e.srv.Requests() {
			if strings.Contains(r.Path, "/rules/branches/") {
				c++
			}
		}
		return c
	}
	before := reads()
	if r := e.chain(1)[0]; r.exit != 1 || !strings.Contains(r.stdout+r.stderr, "GH013") {
		t.Fatalf("plan: exit %d, want the push refused by the rule (GH013)\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if got := reads() - before; got != 0 {
		t.Errorf("the plan step read the rules %d times, want none (the branch exists)", got)
	}
	e.wantState(n, workflow.HumanNeeded)
	if !e.record(n).RulesRefused {
		t.Error("the record does not say a rule refused the push")
	}
	invoked := len(e.invocations())
	r := e.comment(n, "/ralph retry", maintainer)
	if rest := e.chain(1); len(rest) > 0 {
		r = rest[0]
	}
	out := r.stdout + r.stderr
	if !strings.Contains(out, "the repository's rules would refuse ralph's work on ralph/1-add-a-greeting") || !strings.Contains(out, "commit_message_pattern (ruleset") {
		t.Errorf("the retried step did not stop on the rule up front:\n%s", out)
	}
	if got := len(e.invocations()); got != invoked {
		t.Errorf("the agent ran %d more times after the retry, want none", got-invoked)
	}
}

// The fix round takes the failing checks the base's rules require (required_status_checks) first, whatever
// GitHub's order; the status comment says which required checks were failing, pending or missing on the
// commit.
func TestFixRequiredChecksFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\n"))
	e.srv.AddRuleset("ci", []string{"~DEFAULT_BRANCH"}, githubtest.Rule{Type: "required_status_checks",
		Parameters: map[string]any{"strict_required_status_checks_policy": false, "required_status_checks": []map[string]any{
			{"context": "build"}, {"context": "unit"}, {"context": "deploy"}, {"context": "vet"}}}})
	n, pr := e.inReview()
	head := e.recordOf(n).Head
	for _, name := range []string{"lint", "build"} {
		e.srv.SetCheckRun(head, githubtest.CheckRun{Name: name, Conclusion: "failure", Title: name + " failed", Summary: name + " failed"})
	}
	e.srv.SetCheckRun(head, githubtest.CheckRun{Name: "unit", Status: "in_progress"})
	e.srv.SetCheckRun(head, githubtest.CheckRun{Name: "vet", Conclusion: "success"})
	if r := e.run("check_suite", e.suiteEvent(pr, head), nil); r.exit != 0 || r.outputs["step"] != "fix" {
		t.Fatalf("the checks' run: exit %d, outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
	status := e.statusComment(n)
	for _, line := range []string{"### Required checks", "on `" + head[:7] + "`", "- build: failing\n", "- unit: pending", "- deploy: missing"} {
		if !strings.Contains(status, line) {
			t.Errorf("the status comment lacks %q:\n%s", line, status)
		}
	}
	if strings.Contains(status, "- vet:") || strings.Contains(status, "- lint:") {
		t.Errorf("the status comment lists a passing or an unrequired check among the required:\n%s", status)
	}
	e.chain(5)
	e.wantState(n, workflow.InReview)
	prompts := e.prompts("fix")
	if len(prompts) == 0 {
		prompts = e.prompts("implement")
	}
	p := prompts[len(prompts)-1]
	b, l := strings.Index(p, "### Check `build`"), strings.Index(p, "### Check `lint`")
	if b < 0 || l < 0 || b > l {
		t.Errorf("the fix prompt does not take the required check build first (build at %d, lint at %d):\n%s", b, l, p)
	}
}
