package view

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// viewGitHub is a Reader over one issue's comments and labels; alice has write access. lock is the
// message of the issue's lock commit ("": nobody holds it); labeler added ralph:build.
type viewGitHub struct {
	comments []ghapi.Comment
	labels   []string
	lock     string
	labeler  string
}

func (g viewGitHub) IssueWithComments(context.Context, int) (ghapi.Issue, []ghapi.Comment, error) {
	is := ghapi.Issue{Number: 7, State: "open"}
	for _, l := range g.labels {
		is.Labels = append(is.Labels, ghapi.Label{Name: l})
	}
	return is, g.comments, nil
}
func (g viewGitHub) Comments(context.Context, int) ([]ghapi.Comment, error) { return g.comments, nil }
func (viewGitHub) Permission(_ context.Context, login string) (string, error) {
	if login == "alice" {
		return "write", nil
	}
	return "read", nil
}
func (g viewGitHub) LabeledBy(context.Context, int, string) (string, error) { return g.labeler, nil }
func (viewGitHub) Viewer(context.Context) (string, error)                   { return "ralph-app[bot]", nil }
func (viewGitHub) Issues(context.Context, ghapi.IssueFilter) ([]ghapi.Issue, error) {
	return []ghapi.Issue{{Number: 7, State: "open"}}, nil
}
func (g viewGitHub) GetRef(context.Context, string) (ghapi.Ref, error) {
	if g.lock == "" {
		return ghapi.Ref{}, ghapi.ErrNotFound
	}
	var r ghapi.Ref
	r.Object.SHA = strings.Repeat("b", 40)
	return r, nil
}
func (g viewGitHub) Commit(context.Context, string) (ghapi.GitCommit, error) {
	return ghapi.GitCommit{Message: g.lock}, nil
}
func (viewGitHub) Owner() string { return "octo" }
func (viewGitHub) Repo() string  { return "widgets" }

// TestFindRecord: gh ralph status believes the record a run believes, and no other.
func TestFindRecord(t *testing.T) {
	cfg := config.Default()
	good := record.Record{State: workflow.InProgress, Branch: cfg.BranchPrefix + "7-x", Base: "main"}
	bad := record.Record{State: workflow.InProgress, Branch: "main-evil", Base: "main"}
	status := func(rec record.Record) string { return engine.RenderStatus(7, rec, cfg, record.Links{}) }
	tests := []struct {
		name     string
		comments []ghapi.Comment
		want     workflow.State
		warn     string
	}{
		{"ralph's own record", []ghapi.Comment{{User: ghapi.User{Login: engine.ActionsBot}, Body: status(good)}}, workflow.InProgress, ""},
		{"an outsider's status comment is passed over",
			[]ghapi.Comment{{User: ghapi.User{Login: "mallory"}, Body: status(good)}}, "", "ignored a comment by @mallory"},
		{"a record ralph would not have written is refused, as a run refuses it",
			[]ghapi.Comment{{User: ghapi.User{Login: "alice"}, Body: status(bad)}}, "", "ralph cannot use the record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, _, warns, err := FindRecord(context.Background(), viewGitHub{comments: tt.comments}, cfg, 7, tt.comments)
			if err != nil {
				t.Fatal(err)
			}
			if rec.State != tt.want {
				t.Errorf("state = %q, want %q", rec.State, tt.want)
			}
			if got := strings.Join(warns, "\n"); tt.warn == "" && got != "" || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings = %q, want one about %q", got, tt.warn)
			}
		})
	}
}

// TestReadView: the view of an issue is its checked record, its progress and what comes next.
func TestRead(t *testing.T) {
	cfg := config.Default()
	rec := record.Record{State: workflow.InProgress, Branch: cfg.BranchPrefix + "7-x", Base: "main",
		Phases: []record.Phase{{Title: "one", SHA: strings.Repeat("a", 40)}, {Title: "two"}}}
	gh := viewGitHub{comments: []ghapi.Comment{{User: ghapi.User{Login: engine.ActionsBot}, Body: engine.RenderStatus(7, rec, cfg, record.Links{})}}}
	v, err := Read(context.Background(), gh, cfg, 7, Watch{Now: time.Now(), Stale: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Phases(), (PhaseProgress{Done: 1, Total: 2, Next: "two"}); got != want {
		t.Errorf("Phases() = %+v, want %+v", got, want)
	}
	if v.State != workflow.InProgress || !v.HasRecord || !strings.Contains(strings.Join(v.Warnings, "\n"), "disagree") {
		t.Errorf("view = %+v; want In Progress, with a warning that the (missing) labels disagree", v)
	}
	if got := v.Next(cfg); !strings.Contains(got, "phase 2 of 2") {
		t.Errorf("Next() = %q, want the second phase", got)
	}
	recs, err := ReadRecords(context.Background(), gh, cfg, []ghapi.Issue{{Number: 7}})
	if err != nil || recs[7] == nil || recs[7].State != workflow.InProgress {
		t.Errorf("ReadRecords = %v, %v", recs, err)
	}
}

// TestReadViewUnowned: an issue with a step to take whose ralph:build was added by someone without write
// access (or by no one an event names) waits for a writer, and status says so and what to do; added by a
// writer, nothing is said. At a gate, who added the label does not matter and is not asked.
func TestReadViewUnowned(t *testing.T) {
	cfg := config.Default()
	rec := record.Record{State: workflow.ReadyForPlan, Branch: cfg.BranchPrefix + "7-x", Base: "main", Reason: "stuck", Before: workflow.ReadyForPlan}
	body := engine.RenderStatus(7, rec, cfg, record.Links{})
	for _, tt := range []struct {
		labeler string
		state   workflow.State
		want    string
	}{
		{"mallory", workflow.ReadyForPlan, "ralph:build was added by @mallory, who may not drive ralph: no sweep takes #7 until someone with write access runs gh ralph enroll 7"},
		{"", workflow.ReadyForPlan, "no event says who added ralph:build: no sweep takes #7"},
		{"alice", workflow.ReadyForPlan, ""},
		{"mallory", workflow.HumanNeeded, ""},
	} {
		r := rec
		r.State = tt.state
		if tt.state != rec.State {
			body = engine.RenderStatus(7, r, cfg, record.Links{})
		}
		gh := viewGitHub{labeler: tt.labeler, labels: []string{workflow.LabelBuild, tt.state.Label()},
			comments: []ghapi.Comment{{User: ghapi.User{Login: engine.ActionsBot}, Body: body}}}
		v, err := Read(context.Background(), gh, cfg, 7, Watch{Now: time.Now(), Stale: 72 * time.Hour})
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
		if !strings.Contains(warns, tt.want) {
			t.Errorf("labeled by %q: warnings %q, want %q", tt.labeler, warns, tt.want)
		}
		if !strings.HasPrefix(next, "a person with write access:") || !strings.Contains(next, "gh ralph enroll 7") {
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
	cfg := config.Default()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := record.Record{State: workflow.ResearchNeeded, Branch: cfg.BranchPrefix + "7-x", Base: "main",
		Last: &record.Entry{Step: workflow.Enroll, To: workflow.ResearchNeeded, At: now.Add(-time.Minute), Outcome: "done"}}
	holder := func(expires time.Time) string {
		return fmt.Sprintf("ralph lock for #7 (abc)\n\n{\"kind\":\"actions\",\"run_id\":42,\"since\":%q,\"expires\":%q}\n",
			now.Add(-time.Minute).Format(time.RFC3339), expires.Format(time.RFC3339))
	}
	tests := []struct {
		name        string
		lock        string
		wantRunning workflow.State
		wantWarn    string
	}{
		{"held", holder(now.Add(time.Hour)), workflow.ResearchInProgress, ""},
		{"lease expired", holder(now.Add(-time.Second)), workflow.ResearchInProgress, "stale lock: held by Actions run 42"},
		{"no lock", "", workflow.ResearchInProgress, "no run holds the issue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := viewGitHub{
				comments: []ghapi.Comment{{User: ghapi.User{Login: engine.ActionsBot}, Body: engine.RenderStatus(7, rec, cfg, record.Links{})}},
				labels:   []string{workflow.LabelBuild, workflow.ResearchInProgress.Label()},
				lock:     tt.lock,
			}
			v, err := Read(context.Background(), gh, cfg, 7, Watch{Now: now, Stale: 72 * time.Hour})
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
