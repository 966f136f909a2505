package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// commentFilter is the issue_comment clause of examples/ralph.yml's job if:, whitespace folded: a /ralph
// command by the repository's owner, a member or a collaborator.
const commentFilter = `(startsWith(github.event.comment.body, '/ralph') && contains(fromJSON('["OWNER","MEMBER","COLLABORATOR"]'), github.event.comment.author_association))`

// commentRuns says whether GitHub starts the job of ralph.yml (its if:, as the user copied it) for a comment
// with body by someone of association: each clause of the if: is "(github.event_name != 'X' || ...)", true
// for a comment unless X is issue_comment, whose clause the test evaluates as GitHub would (startsWith is
// case-insensitive). A clause of another form, or a comment clause other than commentFilter, fails the
// test, which then needs teaching.
func commentRuns(t *testing.T, wf shippedWorkflow, body, association string) bool {
	t.Helper()
	cond := strings.Join(strings.Fields(wf.Jobs["ralph"].If), " ")
	const open = "(github.event_name != '"
	rest, ok := strings.CutPrefix(cond, open)
	if !ok {
		t.Fatalf("ralph.yml's if: does not start with %q: %s", open, cond)
	}
	seen := false
	for _, clause := range strings.Split(rest, ") && "+open) {
		event, test, ok := strings.Cut(clause, "' || ")
		if !ok {
			t.Fatalf("ralph.yml's if: has a clause the test does not know: %s", clause)
		}
		if event != "issue_comment" {
			continue // true for a comment
		}
		seen = true
		if test != commentFilter {
			t.Fatalf("ralph.yml's issue_comment filter is %s; the test evaluates %s", test, commentFilter)
		}
	}
	if !seen {
		return true // no filter: every comment starts the job
	}
	return strings.HasPrefix(strings.ToLower(body), "/ralph") && slices.Contains([]string{"OWNER", "MEMBER", "COLLABORATOR"}, association)
}

// The comment commands of examples/ralph.yml as copied: its issue_comment trigger starts the job for a
// maintainer's /ralph approve, which approves the plan and carries the issue on to In Review; its if: keeps
// a comment that is not a command, and a command by someone outside the repository, from starting any run.
func TestCommentExampleReachesInReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	wf := e.pushShipped("ralph.yml", "ralph.yml")
	on, ok := wf.On["issue_comment"].(map[string]any)
	if !ok || !slices.ContainsFunc(on["types"].([]any), func(v any) bool { return v == "created" }) {
		t.Fatalf("ralph.yml has no issue_comment trigger on created comments: %v", wf.On["issue_comment"])
	}
	const group = "ralph-${{ github.event_name == 'issue_comment' && format('comment-{0}', github.run_id) ||"
	if g := wf.Jobs["ralph"].Concurrency.Group; !strings.HasPrefix(g, group) {
		t.Fatalf("ralph.yml's concurrency group %q does not give a comment a group of its own", g)
	}
	inputs := wf.inputs(t, "ralph", map[string]string{"inputs.command": ""}) // a comment has no inputs

	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please.")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("label run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.chain(20)
	e.wantState(n, workflow.PlanInReview)

	// What the if: keeps from starting a run: a remark, and a command by someone outside the repository.
	e.srv.SetPermission("mallory", "read")
	for _, c := range []struct{ body, user, association string }{
		{"Looks good to me.", maintainer, "MEMBER"},
		{"/ralph approve", "mallory", "NONE"},
		{"/ralph approve", "mallory", "CONTRIBUTOR"},
	} {
		if commentRuns(t, wf, c.body, c.association) {
			t.Errorf("ralph.yml's job runs for %q by @%s (%s)", c.body, c.user, c.association)
		}
	}

	body := "/ralph approve"
	if !commentRuns(t, wf, body, "MEMBER") {
		t.Fatalf("ralph.yml's job does not run for %q by a member", body)
	}
	e.srv.AddComment(n, maintainer, body)
	ev := commentEvent(t, n, body, maintainer)
	ev["comment"].(map[string]any)["author_association"] = "MEMBER"
	r := e.run("issue_comment", ev, inputs)
	e.invariants(n)
	if r.exit != 0 {
		t.Fatalf("comment run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.InProgress)
	e.chain(20)
	e.wantState(n, workflow.InReview)
}
