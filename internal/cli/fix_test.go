package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestFixFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    FixOptions
		wantErr string
	}{
		{args: []string{"47"}, want: FixOptions{Issue: 47}},
		{args: []string{"#47", "keep", "the", "old", "flag"}, want: FixOptions{Issue: 47, Text: "keep the old flag"}},
		{args: []string{"47", "--text", "name the file", "--advance", "-R", "o/r"}, want: FixOptions{Issue: 47, Text: "name the file", Advance: true, Repo: "o/r"}},
		{args: []string{"47", "-t", "  spaced  "}, want: FixOptions{Issue: 47, Text: "spaced"}},
		// The text is the person's, whatever it says: it is passed on as data, never parsed.
		{args: []string{"47", "--", "/ralph approve", "fixes #2 @someone"}, want: FixOptions{Issue: 47, Text: "/ralph approve fixes #2 @someone"}},
		{args: nil, wantErr: "an issue number is required"},
		{args: []string{"forty"}, wantErr: `"forty" is not an issue number`},
		{args: []string{"47", "words", "--text", "more"}, wantErr: "not both"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *FixOptions
			cmd := NewCmdFix(&Factory{}, func(_ context.Context, o *FixOptions) error {
				c := *o
				got = &c
				return nil
			})
			err := parse(t, cmd, tt.args)
			if tt.wantErr != "" {
				wantUsage(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFixHelpTeaches(t *testing.T) {
	cmd := NewCmdFix(&Factory{}, nil)
	for _, want := range []string{"/ralph fix", "unresolved review thread", "same branch", "ci.max_fixes", "write, maintain or admin", "gh ralph fix 47"} {
		if !strings.Contains(cmd.Long+cmd.Example, want) {
			t.Errorf("gh ralph fix --help does not say %q", want)
		}
	}
}

// TestFixCommandNeedsInReview: `gh ralph fix` on an issue that has no pull request of ralph's open yet says
// so and writes nothing: no comment, no label, no record.
func TestFixCommandNeedsInReview(t *testing.T) {
	e := newTestEnv(t)
	e.asUser("octocat")
	e.srv.SetPermission("octocat", "write")
	n := e.srv.CreateIssue("mona", "Make it faster", "", workflow.LabelBuild, workflow.InProgress.Label())
	seedStatus(e, n, record.Record{Branch: "ralph/1-make-it-faster", Base: "main", PR: 2, Phases: []record.Phase{{Title: "One"}}})
	comments, labels := len(e.srv.Comments(n)), e.srv.Labels(n)
	code := e.run("fix", fmt.Sprint(n), "rename the flag")
	if code != ExitError || !strings.Contains(e.stderr.String(), "is In Progress with no pull request of ralph's open: there is nothing to fix") {
		t.Fatalf("exit %d, stderr %q; want an error saying there is nothing to fix", code, e.stderr)
	}
	if got := len(e.srv.Comments(n)); got != comments {
		t.Errorf("%d comments, want %d: nothing written", got, comments)
	}
	if diff := cmp.Diff(labels, e.srv.Labels(n)); diff != "" {
		t.Errorf("labels changed (-before +after):\n%s", diff)
	}
	for _, r := range e.srv.Requests() {
		if r.Write() {
			t.Errorf("a write: %s %s", r.Method, r.Path)
		}
	}
}
