package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// advance, sweep and enroll take --json FIELDS, --jq and --template as status does (issue 33): the
// fields are the text's columns by name, and stdout holds nothing but the JSON.
func TestStepsJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.asUser("octocat")
	e.srv.SetTokenLogin("octocat")
	e.srv.SetPermission("octocat", "write")
	e.srv.SetPermission("mona", "write")
	e.srv.SetPermission("eve", "read")
	pipeline(e) // #2 not started, #3 In Progress are ready; #4, #5 are gates, #6 a lock
	evil := e.srv.CreateIssue("eve", "Enrolled by someone who may not", "", workflow.LabelBuild)

	decode := func(what string) []map[string]any {
		t.Helper()
		var list []map[string]any
		if err := json.Unmarshal([]byte(e.stdout.String()), &list); err != nil {
			t.Fatalf("%s: stdout is not a JSON list: %v\n%s", what, err, e.stdout)
		}
		return list
	}

	// sweep --dry-run: the issues it would advance, and the one it passes over with the reason.
	if code := e.run("sweep", "--dry-run", "--json", "number,outcome"); code != 0 {
		t.Fatalf("sweep --json: exit %d: %s", code, e.stderr)
	}
	want := []map[string]any{{"number": float64(evil), "outcome": "skipped"}, {"number": 2.0, "outcome": "dry-run"}, {"number": 3.0, "outcome": "dry-run"}}
	if diff := cmp.Diff(want, decode("sweep")); diff != "" {
		t.Errorf("sweep --dry-run --json (-want +got):\n%s", diff)
	}
	if code := e.run("sweep", "--dry-run", "--json", "number,outcome,message", "--jq", `.[] | select(.outcome == "skipped") | .message`); code != 0 || !strings.Contains(e.stdout.String(), "@eve") {
		t.Errorf("sweep --jq: exit %d: %q %s", code, e.stdout, e.stderr)
	}

	// advance --dry-run: a list with the step it would run.
	if code := e.run("advance", "2", "--dry-run", "--json", "number,step,from,state,outcome"); code != 0 {
		t.Fatalf("advance --json: exit %d: %s", code, e.stderr)
	}
	want = []map[string]any{{"number": 2.0, "step": "research", "from": "research-needed", "state": "research-needed", "outcome": "dry-run"}}
	got := decode("advance")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("advance --dry-run --json (-want +got):\n%s", diff)
	}
	if code := e.run("advance", "2", "--dry-run", "--json", "step", "--template", `{{range .}}{{.step}}{{end}}`); code != 0 || e.stdout.String() != fmt.Sprint(got[0]["step"]) {
		t.Errorf("advance --template: exit %d: %q %s", code, e.stdout, e.stderr)
	}

	// enroll: one object.
	n := e.srv.CreateIssue("mona", "Add dark mode", "")
	if code := e.run("enroll", fmt.Sprint(n), "--json", "number,outcome,state"); code != 0 {
		t.Fatalf("enroll --json: exit %d: %s", code, e.stderr)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(e.stdout.String()), &obj); err != nil {
		t.Fatalf("enroll: stdout is not a JSON object: %v\n%s", err, e.stdout)
	}
	if diff := cmp.Diff(map[string]any{"number": float64(n), "outcome": "enrolled", "state": ""}, obj); diff != "" {
		t.Errorf("enroll --json (-want +got):\n%s", diff)
	}

	// Bad flags change nothing and say what to do.
	for _, args := range [][]string{
		{"advance", "2", "--json", "nope"},
		{"sweep", "--json", "title"},
		{"enroll", "2", "--jq", ".number"},
		{"advance", "2", "--print-prompt", "--json", "step"},
	} {
		before := len(e.srv.Requests())
		if code := e.run(args...); code != ExitUsage {
			t.Errorf("%s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
		}
		if len(e.srv.Requests()) != before {
			t.Errorf("%s made requests", strings.Join(args, " "))
		}
	}
	if code := e.run("advance", "2", "--json"); code != ExitUsage || !strings.Contains(e.stderr.String(), "pullRequest") {
		t.Errorf("advance --json alone: exit %d, want the fields listed: %s", code, e.stderr)
	}
}

// The help of each command that runs steps says what its text columns are and which JSON fields it has.
func TestStepsHelpDocumentsColumns(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for _, c := range []string{"advance", "sweep", "enroll"} {
		if code := e.run(c, "--help"); code != 0 {
			t.Fatalf("%s --help: exit %d", c, code)
		}
		help := strings.Join(strings.Fields(e.stdout.String()), " ")
		for _, want := range []string{"issue, step, from", "outcome, pull request, message", "the JSON fields are number, step, from, state", "outcome, pullRequest and message", "--json fields"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not say %q:\n%s", c, want, e.stdout)
			}
		}
	}
}
