package view

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// repo is the GitHub test server for octo/widgets, whose token is ralph's (the Actions bot), with ralph's
// client of it; alice has write access.
type repo struct {
	srv    *githubtest.Server
	client *ghapi.Client
}

func newRepo(t *testing.T) repo {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{Owner: "octo", Repo: "widgets", TokenLogin: engine.ActionsBot})
	srv.SetPermission("alice", "write")
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "widgets", Transport: srv.Client().Transport,
		Retry: ghapi.Retry{Attempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo{srv: srv, client: c}
}

// issue opens an issue by alice with labels, each added by labeler.
func (r repo) issue(labeler string, labels ...string) int {
	n := r.srv.CreateIssue("alice", "Add a greeting", "")
	for _, l := range labels {
		r.srv.AddLabel(n, l, labeler)
	}
	return n
}

// comments returns issue n's comments as ralph reads them.
func (r repo) comments(t *testing.T, n int) []ghapi.Comment {
	t.Helper()
	cs, err := r.client.Comments(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// lock makes a commit with message, as ralph's lock writes its holder, the lock of issue n.
func (r repo) lock(t *testing.T, n int, message string) {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", r.srv.BareRepo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=ralph", "GIT_AUTHOR_EMAIL=ralph@example.com", "GIT_COMMITTER_NAME=ralph", "GIT_COMMITTER_EMAIL=ralph@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	sha := git("commit-tree", "-m", message, "refs/heads/main^{tree}")
	git("update-ref", "refs/"+lock.RefName(n), sha)
}

// branch is ralph's branch of issue n.
func branch(cfg config.Config, n int) string {
	return fmt.Sprintf("%s%d-add-a-greeting", cfg.BranchPrefix, n)
}

// TestFindRecord: gh ralph status believes the record a run believes, and no other.
func TestFindRecord(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	tests := []struct {
		name   string
		author string
		branch func(n int) string
		want   workflow.State
		warn   string
	}{
		{"ralph's own record", engine.ActionsBot, func(n int) string { return branch(cfg, n) }, workflow.InProgress, ""},
		{"an outsider's status comment is passed over", "mallory", func(n int) string { return branch(cfg, n) }, "", "ignored a comment by @mallory"},
		{"a record ralph would not have written is refused, as a run refuses it", "alice", func(int) string { return "main-evil" }, "", "ralph cannot use the record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := newRepo(t)
			n := gh.issue("alice", workflow.LabelBuild)
			rec := record.Record{State: workflow.InProgress, Branch: tt.branch(n), Base: "main"}
			gh.srv.AddComment(n, tt.author, engine.RenderStatus(n, rec, cfg, record.Links{}))
			got, _, warns, err := FindRecord(context.Background(), gh.client, cfg, n, gh.comments(t, n))
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tt.want {
				t.Errorf("state = %q, want %q", got.State, tt.want)
			}
			if got := strings.Join(warns, "\n"); tt.warn == "" && got != "" || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings = %q, want one about %q", got, tt.warn)
			}
		})
	}
}

// TestReadView: the view of an issue is its checked record, its progress and what comes next.
func TestReadView(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	gh := newRepo(t)
	n := gh.issue("alice", workflow.LabelBuild)
	rec := record.Record{State: workflow.InProgress, Branch: branch(cfg, n), Base: "main",
		Phases: []record.Phase{{Title: "one", SHA: strings.Repeat("a", 40)}, {Title: "two"}}}
	gh.srv.AddComment(n, engine.ActionsBot, engine.RenderStatus(n, rec, cfg, record.Links{}))
	v, err := Read(context.Background(), gh.client, cfg, n, Watch{Now: time.Now(), Stale: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Phases(), (PhaseProgress{Done: 1, Total: 2, Next: "two"}); got != want {
		t.Errorf("Phases() = %+v, want %+v", got, want)
	}
	if v.State != workflow.InProgress || !v.HasRecord || !strings.Contains(strings.Join(v.Warnings, "\n"), "disagree") {
		t.Errorf("view = %+v; want In Progress, with a warning that the (missing) state labels disagree", v)
	}
	if got := v.Next(cfg); !strings.Contains(got, "phase 2 of 2") {
		t.Errorf("Next() = %q, want the second phase", got)
	}
	recs, err := ReadRecords(context.Background(), gh.client, cfg, []ghapi.Issue{{Number: n}})
	if err != nil || recs[n] == nil || recs[n].State != workflow.InProgress {
		t.Errorf("ReadRecords = %v, %v", recs, err)
	}
	// Bad input: an issue that does not exist, one not enrolled.
	other := gh.srv.CreateIssue("alice", "plain", "")
	for num, want := range map[int]string{99: "issue #99 does not exist in octo/widgets", other: "is not enrolled: run `gh ralph enroll"} {
		var ie *engine.InputError
		if _, err := Read(context.Background(), gh.client, cfg, num, Watch{Now: time.Now()}); !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(#%d) = %v, want the person's error %q", num, err, want)
		}
	}
}

// TestReadViewUnowned: an issue with a step to take whose ralph:build was added by someone without write
// access (or by no one an event names) waits for a writer, and status says so and what to do; added by a
// writer, nothing is said. At a gate, who added the label does not matter and is not asked.
func TestReadViewUnowned(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	for _, tt := range []struct {
		labeler string
		state   workflow.State
		want    string
	}{
		{"mallory", workflow.ReadyForPlan, "ralph:build was added by @mallory, who may not drive ralph: no sweep takes #%[1]d until someone with write access runs gh ralph enroll %[1]d"},
		{"", workflow.ReadyForPlan, "no event says who added ralph:build: no sweep takes #%d"},
		{"alice", workflow.ReadyForPlan, ""},
		{"mallory", workflow.HumanNeeded, ""},
	} {
		gh := newRepo(t)
		n := gh.issue(tt.labeler, workflow.LabelBuild, tt.state.Label())
		rec := record.Record{State: tt.state, Branch: branch(cfg, n), Base: "main", Reason: "stuck", Before: workflow.ReadyForPlan}
		gh.srv.AddComment(n, engine.ActionsBot, engine.RenderStatus(n, rec, cfg, record.Links{}))
		v, err := Read(context.Background(), gh.client, cfg, n, Watch{Now: time.Now(), Stale: 72 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		warns, next := strings.Join(v.Warnings, "\n"), v.Next(cfg)
		if tt.want == "" {
			if v.Unowned || strings.Contains(warns, "may not drive") || strings.Contains(next, "write access") {
				t.Errorf("labeled by %q in %s: warnings %q, next %q; want nothing about who labeled it", tt.labeler, tt.state, warns, next)
			}
			continue
		}
		if want := fmt.Sprintf(tt.want, n); !strings.Contains(warns, want) {
			t.Errorf("labeled by %q: warnings %q, want %q", tt.labeler, warns, want)
		}
		if !strings.HasPrefix(next, "a person with write access:") || !strings.Contains(next, fmt.Sprintf("gh ralph enroll %d", n)) {
			t.Errorf("labeled by %q: next %q, want a writer's enroll", tt.labeler, next)
		}
	}
}

// Warnings come from the time an issue has been in its state.
func TestStateWarnings(t *testing.T) {
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		state workflow.State
		age   time.Duration
		want  string
	}{
		{workflow.ResearchNeeded, time.Hour, ""},
		{workflow.ResearchNeeded, 73 * time.Hour, "stuck: Research Needed for 3d1h (longer than 3d)"},
		{workflow.ResearchInProgress, 30 * time.Minute, ""},
		{workflow.ResearchInProgress, 61 * time.Minute, "stale lock: Research in Progress for 1h01m"},
		{workflow.HumanNeeded, time.Minute, "a person is needed"},
		{workflow.Done, 1000 * time.Hour, ""},
	}
	for _, tt := range tests {
		got := strings.Join(stateWarnings(tt.state, clock, Watch{Now: clock.Add(tt.age), Stale: 72 * time.Hour}), "; ")
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s after %s: %q, want %q", tt.state, tt.age, got, tt.want)
		}
	}
}

// TestReadViewRunning: the label a step puts on while it runs is expected, not a disagreement with the
// record; with the lock held status warns of nothing, and with the lock's lease gone, or no lock, it says
// the run stopped.
func TestReadViewRunning(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	holder := func(n int, expires time.Time) string {
		return fmt.Sprintf("ralph lock for #%d (abc)\n\n{\"kind\":\"actions\",\"run_id\":42,\"since\":%q,\"expires\":%q}\n",
			n, now.Add(-time.Minute).Format(time.RFC3339), expires.Format(time.RFC3339))
	}
	tests := []struct {
		name        string
		expires     time.Time // zero: no lock
		wantRunning workflow.State
		wantWarn    string
	}{
		{"held", now.Add(time.Hour), workflow.ResearchInProgress, ""},
		{"lease expired", now.Add(-time.Second), workflow.ResearchInProgress, "stale lock: held by Actions run 42"},
		{"no lock", time.Time{}, workflow.ResearchInProgress, "no run holds the issue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := newRepo(t)
			n := gh.issue("alice", workflow.LabelBuild, workflow.ResearchInProgress.Label())
			rec := record.Record{State: workflow.ResearchNeeded, Branch: branch(cfg, n), Base: "main",
				Last: &record.Entry{Step: workflow.Enroll, To: workflow.ResearchNeeded, At: now.Add(-time.Minute), Outcome: "done"}}
			gh.srv.AddComment(n, engine.ActionsBot, engine.RenderStatus(n, rec, cfg, record.Links{}))
			if !tt.expires.IsZero() {
				gh.lock(t, n, holder(n, tt.expires))
			}
			v, err := Read(context.Background(), gh.client, cfg, n, Watch{Now: now, Stale: 72 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if v.Running != tt.wantRunning {
				t.Errorf("Running = %q, want %q", v.Running, tt.wantRunning)
			}
			warns := strings.Join(v.Warnings, "\n")
			if tt.wantWarn == "" && warns != "" || strings.Contains(warns, "disagree") || !strings.Contains(warns, tt.wantWarn) {
				t.Errorf("warnings = %q, want %q", warns, tt.wantWarn)
			}
		})
	}
}

// TestStartsFrom: the running label a step puts on is expected from the state the step runs from, and from
// no record at all when enrolling puts the issue in that state in the same run; from any other state it is
// not, nor is a state that is no step's running state.
func TestStartsFrom(t *testing.T) {
	moves := engine.Transitions()
	for _, tt := range []struct {
		from, running workflow.State
		want          bool
	}{
		{workflow.ResearchNeeded, workflow.ResearchInProgress, true},
		{workflow.ReadyForPlan, workflow.PlanInProgress, true},
		{"", workflow.ResearchInProgress, true}, // enrolled into Research Needed, then the step started
		{"", workflow.PlanInProgress, true},
		{workflow.ReadyForPlan, workflow.ResearchInProgress, false},
		{workflow.InProgress, workflow.PlanInProgress, false},
		{workflow.Backlog, workflow.ResearchNeeded, false}, // not a running state
	} {
		if got := startsFrom(moves, tt.from, tt.running); got != tt.want {
			t.Errorf("startsFrom(%q, %q) = %v, want %v", tt.from, tt.running, got, tt.want)
		}
	}
}

// TestPipeline: every enrolled open issue, in workflow order, its state ralph's record's (its label's when
// ralph holds none), whether a sweep would take it, and what a person should look at: several state
// labels, an enrollment that counts for nobody. Issues not enrolled, or closed, are not listed.
func TestPipeline(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	gh := newRepo(t)
	review := gh.issue("alice", workflow.LabelBuild, workflow.InReview.Label())
	// The record says Ready for Plan; the label still says Research Needed.
	planned := gh.issue("alice", workflow.LabelBuild, workflow.ResearchNeeded.Label())
	gh.srv.AddComment(planned, engine.ActionsBot, engine.RenderStatus(planned, record.Record{State: workflow.ReadyForPlan, Branch: branch(cfg, planned), Base: "main"}, cfg, record.Links{}))
	twice := gh.issue("alice", workflow.LabelBuild, workflow.Backlog.Label(), workflow.Done.Label())
	stranger := gh.issue("mallory", workflow.LabelBuild)
	gh.issue("alice")                                         // not enrolled
	gh.srv.CloseIssue(gh.issue("alice", workflow.LabelBuild)) // closed
	rows, err := Pipeline(context.Background(), gh.client, cfg, Watch{Now: time.Now(), Stale: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		N       int
		State   workflow.State
		Ready   bool
		Record  bool
		Unowned bool
		Warning string
	}
	var got []row
	for _, r := range rows {
		got = append(got, row{r.Issue.Number, r.State, r.Ready, r.Record != nil, r.Unowned, strings.Join(r.Warnings, "; ")})
	}
	want := []row{
		{stranger, "", true, false, true, fmt.Sprintf("ralph:build was added by @mallory, who may not drive ralph: no sweep takes #%[1]d until someone with write access runs gh ralph enroll %[1]d (or adds the label again)", stranger)},
		{twice, workflow.Backlog, true, false, false, "2 state labels (ralph:backlog, ralph:done)"},
		{planned, workflow.ReadyForPlan, true, true, false, ""},
		{review, workflow.InReview, false, false, false, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pipeline (-want +got):\n%s", diff)
	}
}
