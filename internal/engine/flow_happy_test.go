package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowEndToEnd takes one issue from enrollment to Done, one Advance per step, and checks what each
// step leaves: the state, the Result, the commits on the branch, the comments and the record.
func TestFlowEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	branch := branchOf(n, "parse-widgets")
	researchPath := "thoughts/shared/research/" + day + "-GH-0001-parse-widgets.md"
	planPath := "thoughts/shared/plans/" + day + "-GH-0001-parse-widgets.md"
	reviewPath := "thoughts/shared/reviews/" + day + "-GH-0001-parse-widgets.md"

	// Enrollment and research, in one run.
	res := h.advance(n)
	want := engine.Result{Issue: n, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ReadyForPlan, Continue: true,
		Message: "research: Research Needed → Ready for Plan"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("research Result (-want +got):\n%s", diff)
	}
	h.wantState(n, workflow.ReadyForPlan)
	if got, ok := h.show(branch, researchPath); !ok || got+"\n" != researchDoc {
		t.Errorf("research document on the branch = %q, %v; want %q", got, ok, researchDoc)
	}
	inv := h.agent.last()
	if inv.Command != "research" || inv.Issue != n || inv.Artifact != filepath.Join(inv.Dir, researchPath) || !strings.Contains(inv.Prompt, "Parse widgets") {
		t.Errorf("research invocation = %+v", inv)
	}
	if slices.Contains(inv.Env, "GITHUB_TOKEN=") || !slices.ContainsFunc(inv.Env, func(s string) bool { return strings.HasPrefix(s, "HOME=") }) {
		t.Errorf("research environment = %v", inv.Env)
	}
	docs := h.gh.commentsStarting(n, "## Research Document")
	if len(docs) != 1 || !strings.Contains(docs[0], h.gh.web()+"/blob/"+branch+"/"+researchPath) || !strings.Contains(docs[0], "The widget lives in widget.go.") {
		t.Errorf("research comments = %q", docs)
	}
	rec := h.gh.record(t, n)
	if a := rec.Artifacts["research"]; a.Path != researchPath || a.URL != h.gh.web()+"/blob/"+branch+"/"+researchPath || !strings.Contains(a.Comment, "#issuecomment-") {
		t.Errorf("research artifact = %+v", a)
	}
	if rec.Branch != branch || rec.Base != "main" || rec.Date != day || rec.Slug != "parse-widgets" {
		t.Errorf("record = branch %q base %q date %q slug %q", rec.Branch, rec.Base, rec.Date, rec.Slug)
	}
	if rec.Last == nil || rec.Last.Step != workflow.Research || rec.Last.Outcome != "done" || rec.Last.URL != repoURL+"/actions/runs/77" || !rec.Last.At.Equal(today) {
		t.Errorf("record's last run = %+v", rec.Last)
	}
	if !slices.Contains(h.gh.labels(n), workflow.LabelBuild) {
		t.Errorf("ralph:build was removed: %v", h.gh.labels(n))
	}

	// Plan.
	res = h.advance(n)
	if res.Step != workflow.Plan || res.From != workflow.ReadyForPlan || res.State != workflow.PlanInReview || !res.Continue || res.Paused {
		t.Errorf("plan Result = %+v", res)
	}
	h.wantState(n, workflow.PlanInReview)
	if inv := h.agent.last(); inv.Command != "plan" || !strings.Contains(inv.Prompt, "The widget lives in widget.go.") {
		t.Errorf("the plan's prompt does not hold the research: %+v", inv)
	}
	rec = h.gh.record(t, n)
	if diff := cmp.Diff([]engine.Phase{{Title: "Add the parser"}, {Title: "Wire it up"}}, rec.Phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if len(h.gh.commentsStarting(n, "## Implementation Plan")) != 1 {
		t.Errorf("plan comments: %d", len(h.gh.commentsStarting(n, "## Implementation Plan")))
	}

	// Review: approved.
	res = h.advance(n)
	if res.Step != workflow.Review || res.State != workflow.InProgress || !res.Continue {
		t.Errorf("review Result = %+v", res)
	}
	h.wantState(n, workflow.InProgress)
	if inv := h.agent.last(); inv.Command != "review" || !strings.Contains(inv.Prompt, "## Phase 1: Add the parser") {
		t.Errorf("the review's prompt does not hold the plan: %+v", inv)
	}
	if got, ok := h.show(branch, reviewPath); !ok || !strings.Contains(got, "VERDICT: APPROVED") {
		t.Errorf("review on the branch = %q, %v", got, ok)
	}
	if v := h.gh.record(t, n).Artifacts["review"].Verdict; v != "APPROVED" {
		t.Errorf("review verdict = %q", v)
	}

	// Two phases.
	for k := 1; k <= 2; k++ {
		res = h.advance(n)
		if res.Step != workflow.Implement || res.State != workflow.InProgress || !res.Continue {
			t.Errorf("phase %d Result = %+v", k, res)
		}
		if inv := h.agent.last(); inv.Command != "implement" || inv.Phase != k || inv.Phases != 2 || inv.Artifact != "" {
			t.Errorf("phase %d invocation = %+v", k, inv)
		}
	}
	if res.Message != "phase 2 of 2 done" {
		t.Errorf("phase 2 message = %q", res.Message)
	}
	wantCommits := []string{
		"ralph: research for #1 Parse widgets",
		"ralph: plan for #1 Parse widgets",
		"ralph: plan review for #1 Parse widgets",
		"ralph: Phase 1 of 2: #1 Add the parser",
		"ralph: Phase 2 of 2: #1 Wire it up",
	}
	if diff := cmp.Diff(wantCommits, h.subjects(branch)); diff != "" {
		t.Errorf("commits on %s (-want +got):\n%s", branch, diff)
	}
	for k, name := range []string{"phase1.txt", "phase2.txt"} {
		if got, ok := h.show(branch, name); !ok || got != "phase "+string(rune('1'+k))+" of 2" {
			t.Errorf("%s on the branch = %q, %v", name, got, ok)
		}
	}
	rec = h.gh.record(t, n)
	head, _ := h.originGit("rev-parse", "refs/heads/"+branch)
	if rec.Phases[1].SHA != head || rec.Phases[0].SHA == "" {
		t.Errorf("phase SHAs = %q, %q; branch head %s", rec.Phases[0].SHA, rec.Phases[1].SHA, head)
	}

	// The pull request (self_review off).
	res = h.advance(n)
	if res.Step != workflow.PR || res.State != workflow.InReview || !res.Paused || res.Continue || res.PRURL == "" {
		t.Errorf("pr Result = %+v", res)
	}
	h.wantState(n, workflow.InReview)
	rec = h.gh.record(t, n)
	pr := h.gh.pull(rec.PR)
	if pr == nil || pr.HTMLURL != res.PRURL || rec.PRURL != res.PRURL {
		t.Fatalf("pull request %d: %+v; Result %q", rec.PR, pr, res.PRURL)
	}
	if pr.Title != "Parse widgets (#1)" || pr.Head.Ref != branch || pr.Base.Ref != "main" || pr.Draft {
		t.Errorf("pull request = %+v", pr)
	}
	for _, s := range []string{"Closes #1", "1. Add the parser (" + rec.Phases[0].SHA[:7] + ")", "2. Wire it up", researchPath, planPath, reviewPath} {
		if !strings.Contains(pr.Body, s) {
			t.Errorf("pull request body lacks %q:\n%s", s, pr.Body)
		}
	}

	// Merge: the pull request is open, then merged.
	res = h.advance(n)
	if res.State != workflow.InReview || !res.Paused || !strings.Contains(res.Message, "waits for people") {
		t.Errorf("merge while open: Result = %+v", res)
	}
	h.gh.mergePull(rec.PR)
	res = h.advance(n)
	if res.Step != workflow.Merge || res.From != workflow.InReview || res.State != workflow.Done || res.Paused || res.Continue {
		t.Errorf("merge Result = %+v", res)
	}
	h.wantState(n, workflow.Done)
	res = h.advance(n)
	if res.Step != "" || res.State != workflow.Done || res.Message != "#1 is done" {
		t.Errorf("after Done: Result = %+v", res)
	}

	if diff := cmp.Diff([]string{"research", "plan", "review", "implement", "implement"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
	body := h.gh.statusBody(n)
	for _, s := range []string{
		"## ralph: Done", "- [x] Research", "- [x] Plan", "- [x] Plan review (auto)", "- [x] Implementation (2 of 2 phases)",
		"- [x] Pull request", "- [x] Merged", "### Phases (2 of 2 done)", "- [x] Phase 1: Add the parser — " + rec.Phases[0].SHA[:7],
		"Branch: [`" + branch + "`](" + h.gh.web() + "/tree/" + branch + ")", "Pull request: #", "Nothing: the work is merged.",
		"```mermaid", "[2026-03-04 10:00 UTC](" + repoURL + "/actions/runs/77): **done** — merge: In Review → Done",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("status comment lacks %q:\n%s", s, body)
		}
	}
	if strings.Contains(body, "Self-review") {
		t.Errorf("status comment shows a self-review with self_review off:\n%s", body)
	}
	rec = h.gh.record(t, n)
	var steps []workflow.Event
	for _, d := range rec.Steps {
		steps = append(steps, d.Step)
	}
	if diff := cmp.Diff([]workflow.Event{"research", "plan", "review", "implement", "implement", "pr", "merge"}, steps); diff != "" {
		t.Errorf("steps done (-want +got):\n%s", diff)
	}
	if len(h.lock.acquired) != h.lock.released || len(h.lock.acquired) != 9 {
		t.Errorf("locks: acquired %d, released %d", len(h.lock.acquired), h.lock.released)
	}
}

// TestFlowEnrollment: enrollment's first state follows the config, and enrolling takes the first step in the
// same run; a state label alone enrolls nothing.
func TestFlowEnrollment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(*config.Config)
		step    workflow.Event
		from    workflow.State
		command string
	}{
		{"research on", nil, workflow.Research, workflow.ResearchNeeded, "research"},
		{"research off", func(c *config.Config) { c.Research = false }, workflow.Plan, workflow.ReadyForPlan, "plan"},
		{"triage on", func(c *config.Config) { c.Triage = true }, workflow.Triage, workflow.Backlog, "triage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tt.mod)
			if got := engine.FirstState(h.eng.Config); got != tt.from {
				t.Errorf("FirstState = %s, want %s", got, tt.from)
			}
			n := h.enrolled("Parse widgets")
			res := h.advance(n)
			if res.Step != tt.step || res.From != tt.from {
				t.Errorf("Result = %+v, want step %s from %s", res, tt.step, tt.from)
			}
			if diff := cmp.Diff([]string{tt.command}, h.agent.commands()); diff != "" {
				t.Errorf("agent runs (-want +got):\n%s", diff)
			}
			rec := h.gh.record(t, n)
			if len(rec.History) != 2 || rec.History[0].Step != workflow.Enroll || rec.History[0].To != tt.from {
				t.Errorf("history = %+v", rec.History)
			}
		})
	}

	t.Run("not enrolled", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		n := h.gh.addIssue("Plain", "")
		if _, err := h.eng.Advance(context.Background(), n); !errors.Is(err, engine.ErrNotEnrolled) {
			t.Errorf("Advance of an issue without ralph:build: %v, want ErrNotEnrolled", err)
		}
		// A state label alone enrolls nothing, either.
		m := h.gh.addIssue("Labelled", "", workflow.ReadyForPlan.Label())
		if _, err := h.eng.Advance(context.Background(), m); !errors.Is(err, engine.ErrNotEnrolled) {
			t.Errorf("Advance of an issue with only a state label: %v, want ErrNotEnrolled", err)
		}
		if h.gh.writeCount() != 0 || len(h.agent.commands()) != 0 {
			t.Errorf("writes %s, agent runs %v", h.gh.writes(), h.agent.commands())
		}
	})

	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		var ie *engine.InputError
		if _, err := h.eng.Advance(context.Background(), 0); !errors.As(err, &ie) {
			t.Errorf("Advance(0) = %v, want an InputError", err)
		}
		if _, err := h.eng.Advance(context.Background(), 42); !errors.As(err, &ie) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("Advance(42) = %v, want an InputError", err)
		}
		n := h.gh.enrolledPull("A pull request")
		if _, err := h.eng.Advance(context.Background(), n); !errors.As(err, &ie) || !strings.Contains(err.Error(), "pull request") {
			t.Errorf("Advance of a pull request = %v, want an InputError", err)
		}
		h.gh.failCall("IssueWithComments", 0, 502)
		if _, err := h.eng.Advance(context.Background(), n); err == nil || errors.As(err, &ie) {
			t.Errorf("Advance when GitHub answers 502 = %v, want a plain error", err)
		}
	})

	t.Run("two state labels and no record", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		n := h.gh.addIssue("Confused", "", workflow.LabelBuild, workflow.ReadyForPlan.Label(), workflow.InProgress.Label())
		res := h.advance(n)
		if res.State != workflow.HumanNeeded || !res.Paused {
			t.Errorf("Result = %+v", res)
		}
		h.wantState(n, workflow.HumanNeeded)
		if got := h.gh.commentsStarting(n, "### ralph needs a person"); len(got) != 1 || !strings.Contains(got[0], "2 state labels") {
			t.Errorf("notice = %q", got)
		}
		if len(h.agent.commands()) != 0 {
			t.Errorf("the agent ran: %v", h.agent.commands())
		}
	})
}

// TestFlowDryRun: a dry run says what it would do and writes nothing, on GitHub or on the branch.
func TestFlowDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.eng.DryRun = true
	res := h.advance(n)
	if res.Step != workflow.Research || res.From != workflow.ResearchNeeded || res.State != workflow.ResearchNeeded || !strings.Contains(res.Message, "would run research") {
		t.Errorf("dry run Result = %+v", res)
	}
	// A person's action in a dry run says what it would do, too (here: refused, nothing enrolled).
	if _, err := h.eng.Approve(context.Background(), n, "alice"); err == nil {
		t.Errorf("dry-run Approve of an issue not enrolled: no error")
	}
	if h.gh.writeCount() != 0 {
		t.Errorf("a dry run wrote: %s", h.gh.writes())
	}
	if len(h.agent.commands()) != 0 || h.branchExists(branchOf(n, "parse-widgets")) || len(h.lock.acquired) != 0 {
		t.Errorf("a dry run ran the agent %v, pushed, or locked %v", h.agent.commands(), h.lock.acquired)
	}

	// Enrolled for real, then a dry run of the next step, the labels moved by someone, and the status.
	h.eng.DryRun = false
	h.advance(n)
	h.gh.setLabels(n, workflow.LabelBuild, workflow.Done.Label())
	h.gh.resetLog()
	h.eng.DryRun = true
	res = h.advance(n)
	if res.Step != workflow.Plan || res.State != workflow.ReadyForPlan {
		t.Errorf("dry run Result = %+v", res)
	}
	rec, err := h.eng.Status(context.Background(), n, true)
	if err != nil || rec.State != workflow.ReadyForPlan {
		t.Errorf("dry-run Status = %s, %v", rec.State, err)
	}
	if _, err := h.eng.Retry(context.Background(), n, "alice"); err != nil {
		t.Errorf("dry-run Retry: %v", err)
	}
	if h.gh.writeCount() != 0 {
		t.Errorf("a dry run wrote: %s", h.gh.writes())
	}
	if got := h.gh.stateLabels(n); !slices.Equal(got, []workflow.State{workflow.Done}) {
		t.Errorf("a dry run repaired the labels: %v", got)
	}
}

// TestFlowClosedIssue: a closed issue takes no step until it is reopened.
func TestFlowClosedIssue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.advance(n)
	h.gh.close(n, "completed")
	res := h.advance(n)
	if res.Step != "" || res.State != workflow.ReadyForPlan || !strings.Contains(res.Message, "is closed") {
		t.Errorf("Result = %+v", res)
	}
	if diff := cmp.Diff([]string{"research"}, h.agent.commands()); diff != "" {
		t.Errorf("agent runs (-want +got):\n%s", diff)
	}
}

// TestFlowHeld: an issue another run holds is left alone, and the Result says so.
func TestFlowHeld(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	n := h.enrolled("Parse widgets")
	h.advance(n)
	h.lock.held = map[int]string{n: "Actions run 99"}
	h.gh.resetLog()
	res := h.advance(n)
	if !res.Held || res.State != workflow.ReadyForPlan || !strings.Contains(res.Message, "held by Actions run 99") {
		t.Errorf("Result = %+v", res)
	}
	if h.gh.writeCount() != 0 || len(h.agent.commands()) != 1 {
		t.Errorf("a held issue was changed: %s, agent %v", h.gh.writes(), h.agent.commands())
	}
	if _, err := h.eng.Retry(context.Background(), n, "alice"); err == nil || !strings.Contains(err.Error(), "held by") {
		t.Errorf("Retry of a held issue: %v", err)
	}
	if _, err := h.eng.Advance(context.Background(), 99); err == nil {
		t.Errorf("Advance of a missing issue: no error")
	}
	h.lock.err = errors.New("ref update failed")
	delete(h.lock.held, n)
	if _, err := h.eng.Advance(context.Background(), n); err == nil || !strings.Contains(err.Error(), "ref update failed") {
		t.Errorf("Advance when the lock cannot be taken: %v", err)
	}
	// A stale lock taken over: the step runs, and says so.
	h.lock.tookOver = "Actions run 98 (completed)"
	res = h.advance(n)
	if res.Step != workflow.Plan || !strings.Contains(res.Message, "after taking over a stale lock: Actions run 98") {
		t.Errorf("Result after a takeover = %+v", res)
	}
}
