package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

const boardConfig = "review: interactive\nproject:\n  owner: octo\n  number: 4\n"

func TestInitProject(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.srv.CreateProject("octo", 4, "Roadmap")

	// Without a project: section there is no board to set up, and nothing changes.
	if code := e.run("init", "--project"); code != ExitError || !strings.Contains(e.stderr.String(), "--project needs a project: section") {
		t.Fatalf("init --project without project:: exit %d: %s", code, e.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, WorkflowPath)); err == nil {
		t.Error("init --project without project: wrote the workflow")
	}

	e.writeConfig(boardConfig)
	if code := e.run("init", "--project"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	if want := `created field "Workflow State" of project 4 of octo with 11 options`; !strings.Contains(e.stdout.String(), want) {
		t.Errorf("stdout %q, want %q", e.stdout, want)
	}
	var want []string
	for _, s := range workflow.States() {
		want = append(want, s.Title())
	}
	if diff := cmp.Diff(want, e.srv.ProjectFieldOptions("octo", 4, "Workflow State")); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	// The user's config, which differs from init's, is kept.
	if b, _ := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml")); string(b) != boardConfig {
		t.Errorf("init --project rewrote the config:\n%s", b)
	}

	// Again: the field exists, nothing is written.
	before := len(e.srv.GraphQLRequests())
	if code := e.run("init", "--project"); code != 0 {
		t.Fatalf("second init --project: exit %d: %s", code, e.stderr)
	}
	for _, r := range e.srv.GraphQLRequests()[before:] {
		if strings.HasPrefix(r.Operation, "mutation") {
			t.Errorf("second init --project sent %s", r.Operation)
		}
	}
	if !strings.Contains(e.stderr.String(), "exists with all 11 options") {
		t.Errorf("stderr %q", e.stderr)
	}
	if got := len(e.srv.ProjectFieldOptions("octo", 4, "Workflow State")); got != 11 {
		t.Errorf("%d options after a second run", got)
	}
}

func TestInitProjectWithoutScope(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.srv.CreateProject("octo", 4, "Roadmap")
	e.srv.SetProjectToken("another-token") // gh's token now lacks the project scope
	e.writeConfig(boardConfig)
	if code := e.run("init", "--project"); code != ExitError || !strings.Contains(e.stderr.String(), "gh auth refresh -s project") {
		t.Errorf("exit %d: %s", code, e.stderr)
	}
}

func TestPersonCommandMovesTheBoard(t *testing.T) {
	t.Parallel()
	for _, scoped := range []bool{true, false} {
		t.Run(fmt.Sprintf("scoped=%v", scoped), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.srv.CreateProject("octo", 4, "Roadmap")
			e.writeConfig(boardConfig)
			if code := e.run("init", "--project"); code != 0 {
				t.Fatalf("init --project: exit %d: %s", code, e.stderr)
			}
			if !scoped {
				e.srv.SetProjectToken("another-token")
			}
			e.asUser("octocat")
			e.srv.SetPermission("octocat", "write")
			n := e.srv.CreateIssue("mona", "Make it faster", "", workflow.LabelBuild, workflow.PlanInReview.Label())
			seedStatus(e, n, record.Record{Branch: "ralph/1-make-it-faster", Base: "main", Phases: []record.Phase{{Title: "One"}}})

			if code := e.run("approve", fmt.Sprint(n)); code != 0 {
				t.Fatalf("approve: exit %d: %s", code, e.stderr)
			}
			if got := e.state(n); got != workflow.InProgress {
				t.Errorf("state %s, want in-progress", got)
			}
			got, ok := e.srv.ProjectItemValue("octo", 4, n, "Workflow State")
			if scoped && got != "In Progress" {
				t.Errorf("board option %q, %v; want In Progress", got, ok)
			}
			if !scoped {
				if ok {
					t.Errorf("board option %q set with a token that cannot reach projects", got)
				}
				if !strings.Contains(e.stderr.String(), "gh auth refresh -s project") {
					t.Errorf("no hint about the project scope: %s", e.stderr)
				}
			}
		})
	}
}
