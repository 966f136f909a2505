package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// viewGitHub is a StatusReader over one issue's comments; alice has write access.
type viewGitHub struct{ comments []ghapi.Comment }

func (g viewGitHub) IssueWithComments(context.Context, int) (ghapi.Issue, []ghapi.Comment, error) {
	return ghapi.Issue{Number: 7, State: "open"}, g.comments, nil
}
func (g viewGitHub) Comments(context.Context, int) ([]ghapi.Comment, error) { return g.comments, nil }
func (viewGitHub) Permission(_ context.Context, login string) (string, error) {
	if login == "alice" {
		return "write", nil
	}
	return "read", nil
}
func (viewGitHub) Viewer(context.Context) (string, error) { return "ralph-app[bot]", nil }
func (viewGitHub) Owner() string                          { return "octo" }
func (viewGitHub) Repo() string                           { return "widgets" }

// TestFindRecord: gh ralph status believes the record a run believes, and no other.
func TestFindRecord(t *testing.T) {
	cfg := config.Default()
	good := Record{State: workflow.InProgress, Branch: cfg.BranchPrefix + "7-x", Base: "main"}
	bad := Record{State: workflow.InProgress, Branch: "main-evil", Base: "main"}
	status := func(rec Record) string { return RenderStatus(7, rec, cfg, Links{}) }
	tests := []struct {
		name     string
		comments []ghapi.Comment
		want     workflow.State
		warn     string
	}{
		{"ralph's own record", []ghapi.Comment{{User: ghapi.User{Login: ActionsBot}, Body: status(good)}}, workflow.InProgress, ""},
		{"an outsider's status comment is passed over",
			[]ghapi.Comment{{User: ghapi.User{Login: "mallory"}, Body: status(good)}}, "", "ignored a comment by @mallory"},
		{"a record ralph would not have written is refused, as a run refuses it",
			[]ghapi.Comment{{User: ghapi.User{Login: "alice"}, Body: status(bad)}}, "", "ralph cannot use the record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, _, warns, err := FindRecord(context.Background(), viewGitHub{tt.comments}, cfg, 7, tt.comments)
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
func TestReadView(t *testing.T) {
	cfg := config.Default()
	rec := Record{State: workflow.InProgress, Branch: cfg.BranchPrefix + "7-x", Base: "main",
		Phases: []Phase{{Title: "one", SHA: strings.Repeat("a", 40)}, {Title: "two"}}}
	gh := viewGitHub{[]ghapi.Comment{{User: ghapi.User{Login: ActionsBot}, Body: RenderStatus(7, rec, cfg, Links{})}}}
	v, err := ReadView(context.Background(), gh, cfg, 7)
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
