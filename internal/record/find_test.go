package record

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFind: one policy for every reader of ralph's record: the first status comment ralph (or a writer)
// wrote is ralph's, others are passed over and named; a record ralph cannot use is said (the run refuses
// it, status warns), and never returned as a record.
func TestFind(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	good := StatusMarker + "\n## ralph: In Progress\n" + Encode(Record{State: workflow.InProgress, Branch: "ralph/1-x", Base: "main"}) + "\n"
	unchecked := StatusMarker + "\n## ralph: In Progress\n" + Encode(Record{State: workflow.InProgress, Branch: "main", Base: "main"}) + "\n"
	waits := StatusMarker + "\n" + Encode(Record{State: workflow.InProgress, Waiting: &SweepWait{Step: "deploy"}}) + "\n"
	ralph := ghapi.User{Login: "github-actions[bot]", Type: "Bot"}
	mallory := ghapi.User{Login: "mallory"}
	wrote := func(_ context.Context, u ghapi.User) (bool, error) { return u.Login == ralph.Login, nil }
	tests := []struct {
		name     string
		comments []ghapi.Comment
		status   int64 // the status comment's ID (0: none)
		has      bool
		unusable string
		warnings int
	}{
		{"none", []ghapi.Comment{{ID: 1, Body: "hello", User: mallory}}, 0, false, "", 0},
		{"ralph's, after a forgery", []ghapi.Comment{{ID: 1, Body: good, User: mallory}, {ID: 2, Body: good, User: ralph}}, 2, true, "", 1},
		{"only a forgery", []ghapi.Comment{{ID: 1, Body: good, User: mallory}}, 0, false, "", 1},
		{"ralph's without a record", []ghapi.Comment{{ID: 1, Body: StatusMarker + "\nno record", User: ralph}}, 1, false, "it holds no record", 1},
		{"ralph's with a record ralph would not write", []ghapi.Comment{{ID: 1, Body: unchecked, User: ralph}}, 1, false, "not under the branch prefix", 1},
		{"ralph's waiting for a step that is not one", []ghapi.Comment{{ID: 1, Body: waits, User: ralph}}, 1, false, "waiting step \"deploy\"", 1},
		{"ralph's with a broken block", []ghapi.Comment{{ID: 1, Body: good + "\ntrailing", User: ralph}}, 1, false, "not at the end", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Find(context.Background(), tt.comments, cfg, isStep, wrote)
			if err != nil {
				t.Fatal(err)
			}
			if id := int64(0); f.Status != nil {
				id = f.Status.ID
				if id != tt.status {
					t.Errorf("status comment %d, want %d", id, tt.status)
				}
			} else if tt.status != 0 {
				t.Errorf("no status comment, want %d", tt.status)
			}
			if f.Has() != tt.has {
				t.Errorf("Has() = %v, want %v", f.Has(), tt.has)
			}
			if tt.unusable == "" && f.Unusable != nil || tt.unusable != "" && (f.Unusable == nil || !strings.Contains(f.Unusable.Error(), tt.unusable)) {
				t.Errorf("Unusable = %v, want %q", f.Unusable, tt.unusable)
			}
			if !f.Has() && f.Record.State != "" {
				t.Errorf("a record ralph cannot use is returned: %+v", f.Record)
			}
			if got := len(f.Warnings()); got != tt.warnings {
				t.Errorf("Warnings() = %q, want %d", f.Warnings(), tt.warnings)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := Find(context.Background(), []ghapi.Comment{{Body: good, User: mallory}}, cfg, isStep, func(context.Context, ghapi.User) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("Find with a failing wrote = %v, want it to fail with it", err)
	}
}

// isStep is what the engine's table says of the steps the tests name.
func isStep(ev workflow.Event) bool { return ev == workflow.Implement || ev == workflow.Plan }
