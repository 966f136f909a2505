package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// In a repository whose ruleset requires signed commits on ralph's branches, the Action's whole flow ends In
// Review with every commit on the branch made by GitHub and Verified, and the agent's file modes, symlinks,
// large files and deletions on it exactly as the agent left them. (Commits ralph made with git and pushed
// would be refused with GH013.)
func TestSignedCommitsFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: skip\n"))
	e.srv.PushCommit("main", maintainer, "add old.txt", map[string]string{"old.txt": "old\n"})
	e.srv.AddRuleset("signed", []string{"refs/heads/ralph/**"}, githubtest.Rule{Type: "required_signatures"})
	e.setControl("implement_extra", `printf '#!/bin/sh\necho hi\n' > run.sh; chmod +x run.sh; ln -sf feature-1.txt link; rm -f old.txt; head -c 3000000 /dev/zero > big.bin`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("research: exit %d\n%s", r.exit, r.stdout)
	}
	for _, r := range e.chain(10) {
		if r.exit != 0 {
			t.Fatalf("run of %s: exit %d\n%s", r.outputs["step"], r.exit, r.stdout)
		}
	}
	e.wantState(n, workflow.InReview)
	commits := strings.Fields(e.git(e.srv.BareRepo, "rev-list", "refs/heads/main..refs/heads/"+branch))
	if len(commits) < 3 {
		t.Fatalf("ralph's branch has %d commits, want research, plan and the phases", len(commits))
	}
	for _, c := range commits {
		if !e.srv.Verified(c) {
			t.Errorf("commit %s (%s) is not Verified", c, e.git(e.srv.BareRepo, "log", "-1", "--format=%s", c))
		}
	}
	tree := e.git(e.srv.BareRepo, "ls-tree", "-r", "-l", "refs/heads/"+branch)
	for _, want := range []string{"100755 blob", "\trun.sh", "120000 blob", "\tlink", "3000000\tbig.bin"} {
		if !strings.Contains(tree, want) {
			t.Errorf("the branch's tree lacks %q:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "old.txt") {
		t.Errorf("old.txt, which the agent deleted, is on the branch:\n%s", tree)
	}
	if refs := e.git(e.srv.BareRepo, "for-each-ref", "refs/ralph/objects/"); refs != "" {
		t.Errorf("refs left under refs/ralph/objects/:\n%s", refs)
	}
}

// Where GitHub does not sign the commits its API makes (GHES whose admin has not turned on web commit
// signing), ralph reads back the verification and says so in the step summary.
func TestUnverifiedCommitsSummary(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, ""), githubtest.Options{NoWebCommitSigning: true})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("research: exit %d\n%s", r.exit, r.stdout)
	}
	head := e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+branch)
	for _, want := range []string{"### Commits not verified", "- #1 (research): `" + head + ": unsigned`"} {
		if !strings.Contains(r.summary, want) {
			t.Errorf("the step summary lacks %q:\n%s", want, r.summary)
		}
	}
	if !strings.Contains(r.stdout, "GitHub did not verify ralph's commit "+head) {
		t.Errorf("the log does not warn of the unverified commit:\n%s", r.stdout)
	}
}

// A pull request merged through a merge queue: the merge_group event (checks requested on the queue's
// branch) is nothing for ralph to do, and the pull request's close, merged by the queue's bot, moves the issue
// to Done like any merge.
func TestMergeQueueMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: skip\n"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("research: exit %d\n%s", r.exit, r.stdout)
	}
	e.chain(10)
	e.wantState(n, workflow.InReview)
	pr := e.srv.Pulls()[0]

	mg := loadEvent(t, "merge_group.checks_requested")
	mg["merge_group"].(map[string]any)["head_ref"] = fmt.Sprintf("refs/heads/gh-readonly-queue/main/pr-%d-0123456789abcdef0123456789abcdef01234567", pr.Number)
	if r := e.run("merge_group", mg, nil); r.exit != 0 || !strings.Contains(r.stdout, "nothing to do") {
		t.Errorf("merge_group: exit %d, want 0 and nothing to do\n%s", r.exit, r.stdout)
	}
	e.wantState(n, workflow.InReview)

	e.srv.MergePull(pr.Number)
	ev := pullClosedEvent(t, e.srv.Pulls()[0])
	queue := map[string]any{"login": "github-merge-queue[bot]", "id": 118344674, "type": "Bot"}
	ev["sender"] = queue
	ev["pull_request"].(map[string]any)["merged_by"] = queue
	if r := e.run("pull_request", ev, nil); r.exit != 0 {
		t.Fatalf("the queue's merge: exit %d\n%s", r.exit, r.stdout)
	}
	e.wantState(n, workflow.Done)
}

// Where GitHub does not sign its API's commits, ralph cannot write them itself and moves the branch through
// the API: the branch's creation went through but its answer was lost: ralph finds the branch where it was to
// go, and the step is done in that run, once.
func TestSignedCommitBranchMoveLost(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, ""), githubtest.Options{NoWebCommitSigning: true})
	lost := 0
	e.srv.LoseResponse(func(method, path string, status int) bool {
		if method == "POST" && strings.HasSuffix(path, "/git/refs") && status == 201 && lost == 0 {
			lost++
			return true
		}
		return false
	})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 0 || lost != 1 {
		t.Fatalf("research with the branch's creation answer lost (%d lost): exit %d\n%s", lost, r.exit, r.stdout)
	}
	e.wantState(n, workflow.ReadyForPlan)
	if got := e.git(e.srv.BareRepo, "rev-list", "--count", "refs/heads/main..refs/heads/"+branch); got != "1" {
		t.Errorf("ralph's branch has %s commits, want the research commit alone", got)
	}
}
