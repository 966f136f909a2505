package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ralph-dev/gh-ralph/internal/engine"
)

// payload loads one of GitHub's real webhook payloads (testdata/events, from GitHub's published examples)
// and applies edits to it.
func payload(t *testing.T, name string, edit func(map[string]any)) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func TestParseEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		event   string
		payload []byte
		want    Trigger
		wantErr bool
	}{
		{
			name: "ralph:build labeled enrolls", event: "issues",
			payload: payload(t, "issues.labeled", func(m map[string]any) {
				obj(m, "label")["name"] = "ralph:build"
				obj(m, "issue")["number"] = 47.0
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Action: engine.ActEnroll, Issues: []int{47}, Actor: "mona"},
		},
		{
			name: "another label does nothing", event: "issues",
			payload: payload(t, "issues.labeled", nil),
			want:    Trigger{Why: `issues event "labeled" is not ralph:build being added`},
		},
		{
			name: "unlabeled does nothing", event: "issues",
			payload: payload(t, "issues.unlabeled", func(m map[string]any) { obj(m, "label")["name"] = "ralph:build" }),
			want:    Trigger{Why: `issues event "unlabeled" is not ralph:build being added`},
		},
		{
			name: "approve comment", event: "issue_comment",
			payload: payload(t, "issue_comment.created", func(m map[string]any) {
				obj(m, "comment")["body"] = "/ralph approve"
				obj(obj(m, "comment"), "user")["login"] = "hubot"
				delete(obj(m, "issue"), "pull_request")
				obj(m, "issue")["number"] = 3.0
			}),
			want: Trigger{Action: engine.ActApprove, Issues: []int{3}, Actor: "hubot"},
		},
		{
			name: "reject comment carries its reason, lines included", event: "issue_comment",
			payload: payload(t, "issue_comment.created", func(m map[string]any) {
				obj(m, "comment")["body"] = "/ralph reject too big\nsplit phase 2"
				obj(obj(m, "comment"), "user")["login"] = "hubot"
				delete(obj(m, "issue"), "pull_request")
				obj(m, "issue")["number"] = 3.0
			}),
			want: Trigger{Action: engine.ActReject, Issues: []int{3}, Actor: "hubot", Reason: "too big\nsplit phase 2"},
		},
		{
			name: "unknown command gets help", event: "issue_comment",
			payload: payload(t, "issue_comment.created", func(m map[string]any) {
				obj(m, "comment")["body"] = "/ralph deploy"
				obj(obj(m, "comment"), "user")["login"] = "hubot"
				delete(obj(m, "issue"), "pull_request")
				obj(m, "issue")["number"] = 3.0
			}),
			want: Trigger{Own: OwnHelp, Issues: []int{3}, Actor: "hubot", Reason: "deploy"},
		},
		{
			name: "ordinary comment does nothing", event: "issue_comment",
			payload: payload(t, "issue_comment.created", func(m map[string]any) { obj(m, "comment")["body"] = "looks good /ralph approve" }),
			want:    Trigger{Why: "the comment is not a /ralph command"},
		},
		{
			name: "dispatch with issue", event: "workflow_dispatch",
			payload: payload(t, "workflow_dispatch", func(m map[string]any) {
				m["inputs"] = map[string]any{"issue": "12"}
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Action: engine.ActAdvance, Issues: []int{12}, Actor: "mona"},
		},
		{
			name: "dispatch with command", event: "workflow_dispatch",
			payload: payload(t, "workflow_dispatch", func(m map[string]any) {
				m["inputs"] = map[string]any{"issue": "#12", "command": "retry"}
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Action: engine.ActRetry, Issues: []int{12}, Actor: "mona"},
		},
		{
			name: "dispatch with the door's sweep", event: "workflow_dispatch",
			payload: payload(t, "workflow_dispatch", func(m map[string]any) {
				m["inputs"] = map[string]any{"command": "sweep"}
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Own: OwnSweep, Actor: "mona"},
		},
		{
			// Only the command input's words: help (a door's reply to a comment) and unknown words are no
			// request.
			name: "dispatch with an unknown command", event: "workflow_dispatch",
			payload: payload(t, "workflow_dispatch", func(m map[string]any) { m["inputs"] = map[string]any{"issue": "12", "command": "help"} }),
			wantErr: true,
		},
		{
			name: "dispatch with a bad issue", event: "workflow_dispatch",
			payload: payload(t, "workflow_dispatch", func(m map[string]any) { m["inputs"] = map[string]any{"issue": "twelve"} }),
			wantErr: true,
		},
		{
			name: "merged pull request of a ralph branch: its issue, whatever its body says", event: "pull_request",
			payload: payload(t, "pull_request.closed", func(m map[string]any) {
				pr := obj(m, "pull_request")
				pr["number"] = 12.0
				pr["body"] = "Summary\n\nCloses #5\nfixes #9"
				obj(pr, "head")["ref"] = "ralph/5-thing"
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Action: engine.ActMerge, Issues: []int{5}, Actor: "mona", Pull: engine.ClosedPull{Number: 12, Head: "ralph/5-thing", SameRepo: true}},
		},
		{
			name: "closed unmerged pull request of a ralph branch", event: "pull_request",
			payload: payload(t, "pull_request.closed-unmerged", func(m map[string]any) {
				pr := obj(m, "pull_request")
				pr["number"] = 13.0
				pr["body"] = nil
				obj(pr, "head")["ref"] = "ralph/8-thing"
				obj(m, "sender")["login"] = "mona"
			}),
			want: Trigger{Action: engine.ActMerge, Issues: []int{8}, Actor: "mona", Pull: engine.ClosedPull{Number: 13, Head: "ralph/8-thing", SameRepo: true}},
		},
		{
			name: "a body's closing keywords enroll and move nothing", event: "pull_request",
			payload: payload(t, "pull_request.closed", func(m map[string]any) {
				pr := obj(m, "pull_request")
				pr["body"] = "Closes #5"
				obj(pr, "head")["ref"] = "feature"
				pr["number"] = 2.0
			}),
			want: Trigger{Why: "pull request #2 is not from a ralph branch (ralph/N-…)"},
		},
		{
			name: "a fork's branch named like ralph's", event: "pull_request",
			payload: payload(t, "pull_request.closed", func(m map[string]any) {
				pr := obj(m, "pull_request")
				pr["number"] = 3.0
				head := obj(pr, "head")
				head["ref"] = "ralph/5-thing"
				obj(head, "repo")["full_name"] = "mallory/Hello-World"
				obj(head, "repo")["fork"] = true
			}),
			want: Trigger{Why: "pull request #3 comes from another repository; ralph's come from its own branches"},
		},
		{
			name: "an edited comment carries no command", event: "issue_comment",
			payload: payload(t, "issue_comment.created", func(m map[string]any) {
				m["action"] = "edited"
				obj(m, "comment")["body"] = "/ralph approve"
				delete(obj(m, "issue"), "pull_request")
			}),
			want: Trigger{Why: `issue_comment "edited": only new comments carry commands`},
		},
		{name: "schedule sweeps", event: "schedule", payload: []byte(`{"schedule":"17 * * * *"}`), want: Trigger{Own: OwnSweep}},
		{name: "pull_request_target is refused", event: "pull_request_target", payload: payload(t, "pull_request.closed", nil),
			want: Trigger{Why: "ralph never acts on pull_request_target events: they run with secrets on code from forks"}},
		{name: "push does nothing", event: "push", payload: []byte(`{}`), want: Trigger{Why: `ralph has nothing to do for "push" events`}},
		{name: "broken payload", event: "issues", payload: []byte(`{`), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEvent(tt.event, tt.payload, "ralph/")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, ignoreDefaultBranch); diff != "" {
				t.Errorf("ParseEvent (-want +got):\n%s", diff)
			}
		})
	}
}

// ignoreDefaultBranch leaves out of a comparison of Triggers the default branch every payload names
// (TestParseEventDefaultBranch holds it).
var ignoreDefaultBranch = cmpopts.IgnoreFields(Trigger{}, "DefaultBranch")

// TestParseEventDefaultBranch: a trigger carries the repository's default branch as the payload names it,
// whatever the event, and "" when the payload names none.
func TestParseEventDefaultBranch(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"issues.labeled", "pull_request_review.submitted", "pull_request.closed", "workflow_dispatch"} {
		p := payload(t, name, func(m map[string]any) { m["repository"].(map[string]any)["default_branch"] = "trunk" })
		event, _, _ := strings.Cut(name, ".")
		got, err := ParseEvent(event, p, "ralph/")
		if err != nil {
			t.Fatal(err)
		}
		if got.DefaultBranch != "trunk" {
			t.Errorf("%s: DefaultBranch %q, want trunk", name, got.DefaultBranch)
		}
	}
	got, err := ParseEvent("schedule", []byte(`{"schedule":"17 * * * *"}`), "ralph/")
	if err != nil || got.DefaultBranch != "" {
		t.Errorf("schedule without a repository: %+v, %v; want no default branch", got, err)
	}
}

func TestParseComment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		want    Trigger
		command bool
	}{
		{"/ralph approve", Trigger{Action: engine.ActApprove}, true},
		{"  /ralph   RETRY  ", Trigger{Action: engine.ActRetry}, true},
		{"/ralph status\nthanks", Trigger{Action: engine.ActStatus}, true},
		{"/ralph reject no tests", Trigger{Action: engine.ActReject, Reason: "no tests"}, true},
		{"/ralph reject", Trigger{Action: engine.ActReject}, true},
		{"/ralph fix the flag", Trigger{Action: engine.ActFix, Reason: "the flag"}, true},
		{"/ralph", Trigger{Own: OwnHelp}, true},
		{"/ralph deploy now", Trigger{Own: OwnHelp, Reason: "deploy"}, true},
		{"/ralph advance", Trigger{Own: OwnHelp, Reason: "advance"}, true},
		{"/ralphy approve", Trigger{}, false},
		{"please /ralph approve", Trigger{}, false},
		{"", Trigger{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseComment(tt.body)
		if got.Action != tt.want.Action || got.Own != tt.want.Own || got.Reason != tt.want.Reason || ok != tt.command {
			t.Errorf("ParseComment(%q) = %+v, %v; want %+v, %v", tt.body, got, ok, tt.want, tt.command)
		}
	}
}

// TestHelpTextQuotesInert: anyone can comment `/ralph <word>`; ralph's reply quotes the word, which must
// not make ralph mention someone or reference an issue.
func TestHelpTextQuotesInert(t *testing.T) {
	t.Parallel()
	for _, word := range []string{"@mona", "x`@mona`", "fixes#2", "https://github.com/octo/demo/issues/2"} {
		got := HelpText(word)
		if strings.Contains(got, "@mona") || strings.Contains(got, "#2") || strings.Contains(got, "https://") {
			t.Errorf("HelpText(%q) = %q", word, got)
		}
	}
}
