package e2e

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Faults placed at one request of a step, rather than drawn at random: each test names the write whose
// answer goes wrong and checks that the flow ends as a clean one does, with nothing done twice.

// failNext answers the next n requests that match with 502 (the request does nothing), and counts them.
type failNext struct {
	mu     sync.Mutex
	armed  bool
	left   int
	failed int
}

// arm makes the next n matching requests fail, once: a later arm does nothing.
func (f *failNext) arm(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		f.armed, f.left = true, n
	}
}

func (f *failNext) take() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || f.left == 0 {
		return false
	}
	f.left--
	f.failed++
	return true
}

func badGateway(w http.ResponseWriter) {
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write([]byte(`{"message":"Server Error"}` + "\n"))
}

// TestRobustFixRepliesOnce: the run that takes a fix round back to In Review replies on the review thread and
// then records the step; when GitHub fails the record (every edit of the status comment answered 502 for
// that run), a run is dispatched to finish the step. That run must not reply on the thread a second time.
func TestRobustFixRepliesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\n"))
	n, pr := e.inReview()
	_, ids := e.srv.AddReviewThread(pr.Number, "feature-1.txt", 1, "@@ -0,0 +1 @@\n+phase 1 of 1",
		githubtest.ThreadComment{User: maintainer, Body: "Say hello here, not phase 1."})
	e.srv.AddReview(pr.Number, maintainer, "CHANGES_REQUESTED", "One thing.")
	var patch failNext
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/replies") {
			patch.arm(4) // the status edit that follows, and the client's retries of it
			return false
		}
		if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/octo/demo/issues/comments/") && patch.take() {
			badGateway(w)
			return true
		}
		return false
	})
	r := e.run("pull_request_review", e.reviewEvent(pr, maintainer, "OWNER", "One thing."), nil)
	if r.exit != 0 || r.outputs["step"] != "fix" {
		t.Fatalf("the review's run: exit %d, outputs %v\n%s", r.exit, r.outputs, r.stdout)
	}
	runs := e.chain(8)
	e.wantState(n, workflow.InReview)
	if patch.failed == 0 {
		t.Fatalf("no edit of the status comment failed after the reply")
	}
	finished := false
	for _, r := range runs {
		finished = finished || strings.Contains(r.stdout+r.stderr, "dispatching a run to finish the step")
	}
	if !finished {
		t.Errorf("no run was dispatched to finish the step")
	}
	replies := 0
	for _, c := range e.srv.ReviewComments(pr.Number) {
		if c.InReplyTo == ids[0] {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("ralph replied %d times on the thread, want once: %+v", replies, e.srv.ReviewComments(pr.Number))
	}
	if rec := e.recordOf(n); rec.Fix != nil {
		t.Errorf("the record still holds the fix round: %+v", rec.Fix)
	}
}

// TestRobustSweepOneIssueFails: GitHub keeps failing a request about one issue (its events, which say who
// enrolled it, answered 502 every time, as GitHub does with a timeline it cannot render in time). A sweep
// passes over that issue and advances the others; the issue that failed is named, and the next sweep
// tries it again.
func TestRobustSweepOneIssueFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "chain: false\n"))
	a := e.srv.CreateIssue("octocat", "First", "")
	b := e.srv.CreateIssue("octocat", "Second", "")
	e.srv.AddLabel(a, workflow.LabelBuild, maintainer)
	e.srv.AddLabel(b, workflow.LabelBuild, maintainer)
	events := "/repos/octo/demo/issues/" + itoa(a) + "/events"
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && r.URL.Path == events {
			badGateway(w)
			return true
		}
		return false
	})
	schedule := map[string]any{"schedule": "17 * * * *"}
	r := e.run("schedule", schedule, nil)
	if got := e.invocations(); !slices.Equal(got, []string{"research " + itoa(b)}) {
		t.Fatalf("agent invocations = %q, want #%d's research: one issue's failing request stopped the sweep\n%s%s", got, b, r.stdout, r.stderr)
	}
	e.wantState(b, workflow.ReadyForPlan)
	if !strings.Contains(r.stdout+r.stderr, "#"+itoa(a)) || !strings.Contains(r.stdout+r.stderr, "502") {
		t.Errorf("the sweep does not name #%d and why it passed over it:\n%s%s", a, r.stdout, r.stderr)
	}
	e.srv.Intercept(nil)
	r = e.run("schedule", schedule, nil)
	if r.exit != 0 {
		t.Fatalf("the next sweep: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(a, workflow.ReadyForPlan)
}

// TestRobustSplitLostAnswer: the answer to creating the second sub-issue of a split is lost (GitHub created
// it). The run dispatches a run to finish the triage, which must neither ask the agent again (its decision
// is posted already) nor create a part twice.
func TestRobustSplitLostAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "triage: true\nresearch: false\nreview: skip\nself_review: false\nchain: true\n"))
	e.setControl("triage-1", "Too big.\n\nDECISION: split\n\n## Sub-issue: Add the parser\n\nParse it.\n\n## Sub-issue: Use the parser\n\nWire it.\n\nBlocked by: 1\n")
	var mu sync.Mutex
	creates := 0
	e.srv.LoseResponse(func(method, path string, status int) bool {
		if method != http.MethodPost || path != "/repos/octo/demo/issues" {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		creates++
		return creates == 2
	})
	parent := e.srv.CreateIssue("octocat", "Big feature", "Do all of it.")
	r := e.label(parent, maintainer)
	if r.exit == 0 || !strings.Contains(r.stdout+r.stderr, "dispatching a run to finish the step") {
		t.Fatalf("the label run: exit %d, want a failure that dispatches a run to finish the triage\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.srv.LoseResponse(nil)
	r, ok := e.next()
	if !ok || r.exit != 0 || r.outputs["step"] != "triage" {
		t.Fatalf("the run that finishes the triage: exit %d, outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if got := e.invocations(); !slices.Equal(got, []string{"triage 1"}) {
		t.Errorf("agent invocations = %q, want the triage once (its decision was posted)", got)
	}
	if kids := e.srv.SubIssues(parent); len(kids) != 2 {
		t.Errorf("sub-issues %v, want 2", kids)
	}
	created := 0
	for _, q := range e.srv.Requests() {
		if q.Method == http.MethodPost && q.Path == "/repos/octo/demo/issues" && q.Status == http.StatusCreated {
			created++
		}
	}
	if created != 2 {
		t.Errorf("%d issues created, want the 2 parts", created)
	}
	e.wantState(parent, workflow.InProgress)
}

// failStatusEdits answers every edit of an issue comment (ralph's status comment) 502 until the function it
// returns is called, which says how many it answered so.
func (e *env) failStatusEdits() (stop func() int) {
	var mu sync.Mutex
	failing, failed := true, 0
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if failing && r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/octo/demo/issues/comments/") {
			failed++
			badGateway(w)
			return true
		}
		return false
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		failing = false
		return failed
	}
}

// TestRobustReviewCarried: a review that requests changes, whose run cannot record the fix round (GitHub
// answers every edit of the status comment 502 for that run), is not lost: the run dispatches a run to
// finish, carrying the review (in ralph's own finishing ref), and that run starts the fix round, after
// asking again whether the reviewer may. Before, the run dispatched only advanced the issue, which waited
// In Review for a review already given.
func TestRobustReviewCarried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\n"))
	n, pr := e.inReview()
	_, ids := e.srv.AddReviewThread(pr.Number, "feature-1.txt", 1, "@@ -0,0 +1 @@\n+phase 1 of 1",
		githubtest.ThreadComment{User: maintainer, Body: "Say hello here, not phase 1."})
	e.srv.AddReview(pr.Number, maintainer, "CHANGES_REQUESTED", "One thing.")
	stop := e.failStatusEdits()
	r := e.run("pull_request_review", e.reviewEvent(pr, maintainer, "OWNER", "One thing."), nil)
	failed := stop()
	if r.exit == 0 || failed == 0 || !strings.Contains(r.stdout+r.stderr, "dispatching a run to finish @"+maintainer+"'s fix and the step") {
		t.Fatalf("the review's run: exit %d, %d edits failed; want it to fail and carry the review\n%s%s", r.exit, failed, r.stdout, r.stderr)
	}
	if ds := e.srv.Dispatches(); len(ds) == 0 || ds[len(ds)-1].Inputs["command"] != "finish" {
		t.Fatalf("dispatches %+v, want the last with command finish", ds)
	}
	e.chain(6)
	e.wantState(n, workflow.InReview)
	rec := e.recordOf(n)
	if len(rec.Phases) != 2 || !rec.Phases[1].Fix || rec.ReviewRounds != 1 {
		t.Fatalf("record phases %+v, review rounds %d: want the review's fix round done", rec.Phases, rec.ReviewRounds)
	}
	if fix := e.prompts("fix"); len(fix) != 1 || !strings.Contains(fix[0], "Say hello here, not phase 1.") {
		t.Errorf("the fix step's prompts %q, want one carrying the thread", fix)
	}
	replies := 0
	for _, c := range e.srv.ReviewComments(pr.Number) {
		if c.InReplyTo == ids[0] {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("ralph replied %d times on the thread, want once", replies)
	}
}

// TestRobustApproveCarried: a person's /ralph approve whose run cannot record it (every edit of the status
// comment answered 502 for that run) is carried to the run dispatched to finish: that run approves the plan
// as that person (asking again whether they may) and implements it. The approval is not asked twice.
func TestRobustApproveCarried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, "review: interactive\nresearch: false\n"))
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.wantState(n, workflow.PlanInReview)
	stop := e.failStatusEdits()
	r := e.comment(n, "/ralph approve", maintainer)
	failed := stop()
	if r.exit == 0 || failed == 0 || !strings.Contains(r.stdout+r.stderr, "dispatching a run to finish @"+maintainer+"'s approve and the step") {
		t.Fatalf("the approval's run: exit %d, %d edits failed; want it to fail and carry the approval\n%s%s", r.exit, failed, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.PlanInReview)
	e.chain(6)
	e.wantState(n, workflow.InReview)
	status := e.statusComment(n)
	if !strings.Contains(status, "APPROVED by ＠"+maintainer) && !strings.Contains(status, "APPROVED by @"+maintainer) {
		t.Errorf("the status comment does not say who approved:\n%s", status)
	}
	if subjects, _ := e.branch(branch); len(matching(subjects, "Phase 1 of 1")) != 1 {
		t.Errorf("branch commits %v, want the plan's one phase", subjects)
	}
}

// TestRobustCarryWithoutCommandInput: a workflow whose workflow_dispatch declares no command input (GitHub
// refuses a dispatch with an input it does not declare) still gets its run to finish the step: dispatched
// without the command, with a warning saying the person's request is not done again.
func TestRobustCarryWithoutCommandInput(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, "review: interactive\nresearch: false\n"), githubtest.Options{DispatchInputs: []string{"issue"}})
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	e.label(n, maintainer)
	e.wantState(n, workflow.PlanInReview)
	stop := e.failStatusEdits()
	r := e.comment(n, "/ralph approve", maintainer)
	stop()
	if !strings.Contains(r.stdout+r.stderr, "has no workflow_dispatch input command") {
		t.Fatalf("no warning that the command could not be carried:\n%s%s", r.stdout, r.stderr)
	}
	if ds := e.srv.Dispatches(); len(ds) == 0 || ds[len(ds)-1].Inputs["issue"] != "1" || ds[len(ds)-1].Inputs["command"] != nil {
		t.Fatalf("dispatches %+v, want the last for #1 without a command", ds)
	}
	e.chain(3)
	e.wantState(n, workflow.PlanInReview) // the approval is the person's to give again
}
