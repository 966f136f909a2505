package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// seedStatus posts a status comment holding rec on issue n, as a run would have.
func seedStatus(e *testEnv, n int, rec record.Record) {
	rec.State = e.state(n)
	e.srv.AddComment(n, githubtest.BotLogin, engine.RenderStatus(n, rec, config.Default(), record.Links{}))
}

func (e *testEnv) state(n int) workflow.State {
	for _, l := range e.srv.Labels(n) {
		if s, ok := workflow.StateFromLabel(l); ok {
			return s
		}
	}
	return ""
}

// pipeline seeds the issues the status tests read: one per interesting case.
func pipeline(e *testEnv) {
	// mona enrolls the issues: someone who may drive ralph (TestStatusUnowned is someone who may not).
	e.srv.SetPermission("mona", "write")
	e.srv.CreateIssue("mona", "Not for ralph", "")                             // 1: not enrolled
	e.srv.CreateIssue("mona", "Add a --verbose flag", "", workflow.LabelBuild) // 2: enrolled, not started
	n3 := e.srv.CreateIssue("mona", "Speed up the parser", "", workflow.LabelBuild, workflow.InProgress.Label())
	seedStatus(e, n3, record.Record{
		Branch: "ralph/3-speed-up-the-parser", Base: "main",
		Phases:         []record.Phase{{Title: "Benchmark", SHA: "1111111111111111111111111111111111111111"}, {Title: "Cache tokens"}, {Title: "Docs"}},
		PlanIterations: 1, FailedStep: workflow.Implement, Failures: 1,
		Artifacts: map[string]record.Artifact{
			"research": {Path: "thoughts/shared/research/2026-03-01-GH-0003-speed-up-the-parser.md"},
			"plan":     {Path: "thoughts/shared/plans/2026-03-01-GH-0003-speed-up-the-parser.md"},
			"review":   {Path: "thoughts/shared/reviews/2026-03-01-GH-0003-speed-up-the-parser.md", Verdict: "APPROVED"},
		},
		Last: &record.Entry{Step: workflow.Implement, From: workflow.InProgress, To: workflow.InProgress, At: clock.Add(-2 * time.Hour), Outcome: "failed", Message: "verify failed: go test ./..."},
		History: []record.Entry{
			{Step: workflow.Research, At: clock.Add(-50 * time.Hour), Outcome: "done", Usage: &agent.Usage{Turns: 4, InputTokens: 12000, OutputTokens: 900, CostUSD: 0.21, Model: "claude-sonnet-4-5"}},
			{Step: workflow.Implement, At: clock.Add(-2 * time.Hour), Outcome: "failed", Usage: &agent.Usage{Turns: 9, InputTokens: 30000, OutputTokens: 2500, CostUSD: 1.02, Model: "claude-sonnet-4-5"}},
		},
		Usage: &agent.Usage{Turns: 13, InputTokens: 42000, OutputTokens: 3400, CostUSD: 1.23, Model: "claude-sonnet-4-5"},
	})
	n4 := e.srv.CreateIssue("mona", "Fix the login page", "", workflow.LabelBuild, workflow.HumanNeeded.Label())
	seedStatus(e, n4, record.Record{Before: workflow.ReadyForPlan, Reason: "The plan step failed 2 times in a row.", Branch: "ralph/4-fix-the-login-page", Base: "main"})
	e.srv.CreateIssue("mona", "A PR's issue", "", workflow.LabelBuild, workflow.InReview.Label()) // 5
	e.srv.CreateIssue("mona", "Rename things", "", workflow.LabelBuild, workflow.ResearchInProgress.Label())
}

func TestStatusIssue(t *testing.T) {
	for _, tty := range []bool{false, true} {
		name := map[bool]string{false: "notty", true: "tty"}[tty]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			pipeline(e)
			// A gh ralph on a laptop took #3's lock and went away: its lease has expired by now.
			lk := &lock.Locker{Refs: lock.RESTRefs{API: e.client()}, Lease: time.Hour, Now: func() time.Time { return clock },
				Holder: lock.Holder{Kind: "local", Host: "laptop", PID: 99, User: "mona"}, Alive: func(int) bool { return true }}
			lease, err := lk.Acquire(context.Background(), 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = lease.Release(context.Background()) })
			e.now = clock.Add(4 * 24 * time.Hour) // everything is stale by now
			e.tty = tty
			before := len(e.srv.Requests())
			if code := e.run("status", "3"); code != 0 {
				t.Fatalf("exit %d: %s", code, e.stderr)
			}
			golden(t, "status-issue-"+name+".golden", e.scrub(e.stdout.String()))
			for _, r := range e.srv.Requests()[before:] {
				if r.Write() {
					t.Errorf("status wrote: %s %s", r.Method, r.Path)
				}
			}
		})
	}
}

func TestStatusPipeline(t *testing.T) {
	for _, tty := range []bool{false, true} {
		name := map[bool]string{false: "notty", true: "tty"}[tty]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			pipeline(e)
			e.now = clock.Add(4 * 24 * time.Hour)
			e.tty = tty
			if code := e.run("status"); code != 0 {
				t.Fatalf("exit %d: %s", code, e.stderr)
			}
			golden(t, "status-pipeline-"+name+".golden", e.scrub(e.stdout.String()+"--- stderr\n"+e.stderr.String()))
		})
	}
}

func TestStatusJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pipeline(e)
	e.now = clock.Add(time.Hour)

	if code := e.run("status", "3", "--json", "state,phase,iterations,failures,branch,pullRequest,lock"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	want := map[string]any{
		"state":       "in-progress",
		"phase":       map[string]any{"done": 1.0, "total": 3.0, "next": "Cache tokens"},
		"iterations":  map[string]any{"plan": 1.0, "selfReview": 0.0, "max": 3.0},
		"failures":    map[string]any{"step": "implement", "count": 1.0, "max": 2.0},
		"branch":      "ralph/3-speed-up-the-parser",
		"pullRequest": nil,
		"lock":        nil, // nobody holds #3 here
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--json (-want +got):\n%s", diff)
	}

	// #6 shows the label its first step puts on while it runs, but no run holds it: nothing runs, as the
	// text says (it has no running line).
	if code := e.run("status", "6", "--json", "state,running,lock"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var six map[string]any
	if err := json.Unmarshal([]byte(e.stdout.String()), &six); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	if diff := cmp.Diff(map[string]any{"state": "", "running": nil, "lock": nil}, six); diff != "" {
		t.Errorf("--json of a running label (-want +got):\n%s", diff)
	}

	if code := e.run("status", "3", "--json", "phase", "--jq", ".phase.done"); code != 0 || e.stdout.String() != "1\n" {
		t.Errorf("--jq: exit %d, %q %s", code, e.stdout, e.stderr)
	}
	if code := e.run("status", "--json", "number,state", "--jq", `map("\(.number) \(.state)") | join(",")`); code != 0 || e.stdout.String() != "2 ,6 research-in-progress,3 in-progress,5 in-review,4 human-needed\n" {
		t.Errorf("pipeline --jq: exit %d, %q %s", code, e.stdout, e.stderr)
	}
	if code := e.run("status", "--json", "number,warnings", "--template", `{{range .}}{{.number}}:{{len .warnings}} {{end}}`); code != 0 || e.stdout.String() != "2:0 6:0 3:0 5:0 4:1 " {
		t.Errorf("--template: exit %d, %q %s", code, e.stdout, e.stderr)
	}
	// --json alone lists the fields, like gh.
	if code := e.run("status", "3", "--json"); code != ExitUsage || !strings.Contains(e.stderr.String(), "Specify one or more comma-separated fields for `--json`:\n  artifacts\n  branch\n  failures") {
		t.Errorf("--json alone: exit %d, %s", code, e.stderr)
	}
}

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pipeline(e)
	e.srv.Intercept(nil)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", "99"}, ExitError, "issue #99 does not exist in octo/demo"},
		{[]string{"status", "1"}, ExitError, "#1 is not enrolled: run `gh ralph enroll 1`"},
	}
	for _, tt := range tests {
		if code := e.run(tt.args...); code != tt.code || !strings.Contains(e.stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, e.stderr, tt.code, tt.want)
		}
	}
}

// TestStatusBelievesOnlyRalphsRecord: like a run, status reads the state from ralph's own record, not from a
// comment someone else posted with the marker, and says when the labels disagree with it.
func TestStatusBelievesOnlyRalphsRecord(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.srv.SetPermission("mallory", "read")
	forged := e.srv.CreateIssue("mallory", "Forged", "", workflow.LabelBuild, workflow.InProgress.Label())
	e.srv.AddComment(forged, "mallory", engine.RenderStatus(forged, record.Record{State: workflow.InProgress, Branch: "main"}, config.Default(), record.Links{}))
	moved := e.srv.CreateIssue("mona", "Moved", "", workflow.LabelBuild, workflow.PlanInReview.Label())
	seedStatus(e, moved, record.Record{})
	e.srv.RemoveLabel(moved, workflow.PlanInReview.Label(), "trina")
	e.srv.AddLabel(moved, workflow.InProgress.Label(), "trina")
	for _, tt := range []struct {
		n           int
		state, warn string
	}{
		{forged, "", "ignored a comment by @mallory"},
		{moved, "plan-in-review", "disagree with ralph's record (ralph:plan-in-review)"},
	} {
		if code := e.run("status", fmt.Sprint(tt.n), "--json", "state,warnings"); code != 0 {
			t.Fatalf("status %d: exit %d: %s", tt.n, code, e.stderr)
		}
		var got struct {
			State    string   `json:"state"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
			t.Fatal(err)
		}
		if got.State != tt.state || !strings.Contains(strings.Join(got.Warnings, "\n"), tt.warn) {
			t.Errorf("status %d: %+v, want state %q and a warning %q", tt.n, got, tt.state, tt.warn)
		}
	}
}

// status --json carries what the agent cost, per issue and per step, and the pipeline's too.
func TestStatusUsageJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pipeline(e)
	if code := e.run("status", "3", "--json", "usage", "--jq", `[.usage.costUSD, .usage.turns, .usage.inputTokens, (.usage.steps | length), .usage.steps[1].step, .usage.steps[1].costUSD] | @tsv`); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	if got, want := e.stdout.String(), "1.23\t13\t42000\t2\timplement\t1.02\n"; got != want {
		t.Errorf("status 3 --json usage: %q, want %q", got, want)
	}
	if code := e.run("status", "--json", "number,usage", "--jq", `.[] | select(.usage.costUSD > 0) | "\(.number) \(.usage.costUSD)"`); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	if got, want := e.stdout.String(), "3 1.23\n"; got != want {
		t.Errorf("status --json number,usage: %q, want %q", got, want)
	}
}

// Issue numbers complete with the enrolled open issues (all open issues for enroll), as gh completes.
func TestCompleteIssues(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pipeline(e)
	if code := e.run("__complete", "advance", ""); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	for _, want := range []string{"2\tAdd a --verbose flag\n", "3\tSpeed up the parser\n"} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("advance completes without %q:\n%s", want, e.stdout)
		}
	}
	if strings.Contains(e.stdout.String(), "Not for ralph") {
		t.Errorf("advance completes an issue that is not enrolled:\n%s", e.stdout)
	}
	e.run("__complete", "enroll", "1")
	if !strings.Contains(e.stdout.String(), "1\tNot for ralph\n") {
		t.Errorf("enroll does not complete an open issue:\n%s", e.stdout)
	}
}

// status --json usage: the record's figures, ralph's model gateway's when it ran, with the budgets.
func TestStatusJSONUsage(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	u := &agent.Usage{Turns: 2, Requests: 3, InputTokens: 3000, CacheReadTokens: 600, OutputTokens: 150, CostUSD: 0.0123, Model: "claude-sonnet-4-5", Metered: true, Budget: "budget.issue"}
	n := e.srv.CreateIssue("mona", "Spend", "", workflow.LabelBuild, workflow.HumanNeeded.Label())
	seedStatus(e, n, record.Record{Branch: "ralph/1-spend", Base: "main", Usage: u,
		Last: &record.Entry{Step: workflow.Research, At: clock, Outcome: "budget reached", Usage: u}})
	if code := e.run("status", fmt.Sprint(n), "--json", "usage"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var got struct {
		Usage struct {
			Total   map[string]any `json:"total"`
			LastRun map[string]any `json:"lastRun"`
			Budget  map[string]any `json:"budget"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	if got.Usage.Total["costUSD"] != u.CostUSD || got.Usage.LastRun["cacheReadTokens"] != 600.0 || got.Usage.Total["stoppedBy"] != u.Budget || got.Usage.Budget["issue"] != 0.0 {
		t.Errorf("usage = %+v", got.Usage)
	}
	if code := e.run("status", fmt.Sprint(n)); code != 0 || !strings.Contains(e.stdout.String(), "agent usage\t2 turns, 3 model requests, 3,000 in (600 cached) / 150 out tokens, $0.0123 (claude-sonnet-4-5) (metered by ralph's model gateway)") {
		t.Errorf("status: exit %d\n%s", code, e.stdout)
	}
}

// gh ralph status --json fixes: the rounds after the pull request, as the record counts them.
func TestStatusJSONFixes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n := e.srv.CreateIssue("mona", "Make it faster", "", workflow.LabelBuild, workflow.InReview.Label())
	seedStatus(e, n, record.Record{Branch: "ralph/1-make-it-faster", Base: "main", PR: 2, ReviewRounds: 2, CIFixes: 1,
		Phases: []record.Phase{{Title: "One", SHA: strings.Repeat("a", 40)}, {Title: "Address review (round 1)", Fix: true, SHA: strings.Repeat("b", 40), CostUSD: 0.25}}})
	if code := e.run("status", fmt.Sprint(n), "--json", "fixes"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	want := map[string]any{"fixes": map[string]any{"reviews": 2.0, "checks": 1.0, "maxChecks": 2.0, "pending": false,
		"phases": []any{map[string]any{"title": "Address review (round 1)", "sha": strings.Repeat("b", 40), "costUSD": 0.25}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--json fixes (-want +got):\n%s", diff)
	}
}

// gh ralph status of an issue whose run's dispatch was lost: text and --json say that the next step was
// not started, since when, and that the next sweep takes it first; --json waiting is null otherwise.
func TestStatusWaiting(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n := e.srv.CreateIssue("mona", "Make it faster", "", workflow.LabelBuild, workflow.ReadyForPlan.Label())
	since := time.Date(2026, 11, 28, 12, 40, 0, 0, time.UTC)
	seedStatus(e, n, record.Record{Waiting: &record.SweepWait{Since: since, Step: workflow.Plan}})
	if code := e.run("status", fmt.Sprint(n), "--json", "waiting"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, e.stdout)
	}
	want := map[string]any{"waiting": map[string]any{"since": "2026-11-28T12:40:00Z", "step": "plan", "finish": false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--json waiting (-want +got):\n%s", diff)
	}
	line := fmt.Sprintf("waiting\tThe next step (plan) was not started. GitHub did not take its dispatch (2026-11-28 12:40 UTC); the next sweep takes #%d first\n", n)
	if code := e.run("status", fmt.Sprint(n)); code != 0 || !strings.Contains(e.stdout.String(), line) {
		t.Errorf("status: exit %d, want the line %q:\n%s", code, line, e.stdout)
	}

	// The pipeline warns of it too (off a terminal, on stderr).
	if code := e.run("status"); code != 0 || !strings.Contains(e.stderr.String(), fmt.Sprintf("warning: #%d The next step (plan) was not started. The next sweep takes it first.", n)) {
		t.Errorf("status (the pipeline): exit %d, want a warning that #%d waits:\n%s%s", code, n, e.stdout, e.stderr)
	}

	other := e.srv.CreateIssue("mona", "Make it smaller", "", workflow.LabelBuild, workflow.ReadyForPlan.Label())
	seedStatus(e, other, record.Record{})
	if code := e.run("status", fmt.Sprint(other), "--json", "waiting"); code != 0 || strings.TrimSpace(e.stdout.String()) != `{"waiting":null}` {
		t.Errorf("--json waiting of an issue that does not wait: exit %d, %s", code, e.stdout)
	}
}

// SECURITY: what status prints that others wrote (an issue's title, a run's message) reaches a terminal, or a pipe that ends on one, with no control
// character or escape sequence the terminal would act on; only ralph's own colours are escape codes.
func TestStatusPrintsNoEscapesOfOthers(t *testing.T) {
	t.Parallel()
	for _, tty := range []bool{true, false} {
		e := newTestEnv(t)
		e.tty = tty
		hostile := "\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\u009b31m"
		n := e.srv.CreateIssue("mona", "Title "+hostile, "", workflow.LabelBuild, workflow.InProgress.Label())
		seedStatus(e, n, record.Record{Branch: fmt.Sprintf("ralph/%d-title", n), Base: "main",
			Last: &record.Entry{Step: workflow.Implement, To: workflow.InProgress, At: clock, Outcome: "failed", Message: "verify\r failed"}})
		e.now = clock.Add(time.Hour)
		for _, args := range [][]string{{"status", fmt.Sprint(n)}, {"status"}} {
			if code := e.run(args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, e.stderr)
			}
			got := e.stdout.String() + e.stderr.String()
			if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
				t.Errorf("%v (terminal %v): a control character of the title or the record reached the output: %q", args, tty, got)
			}
			if !strings.Contains(got, "^[]52;c;ZXZpbA==^G^[[2J^M") {
				t.Errorf("%v (terminal %v): the title is not shown in caret notation: %q", args, tty, got)
			}
		}
	}
}

// SECURITY: --json, --jq and --template print what others wrote as gh prints an API's answer: a control
// character of a title (or of any other value) is shown in caret notation, never given to the terminal,
// whether the result is JSON, a raw string of --jq or a template's text; a template's own colour stays.
func TestStatusJSONPrintsNoEscapesOfOthers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	hostile := "\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\u009b31m\x7f"
	n := e.srv.CreateIssue("mona", "Title "+hostile, "", workflow.LabelBuild, workflow.InProgress.Label())
	seedStatus(e, n, record.Record{Branch: fmt.Sprintf("ralph/%d-title", n), Base: "main",
		Last: &record.Entry{Step: workflow.Implement, To: workflow.InProgress, At: clock, Outcome: "failed", Message: "verify\x1b]8;;https://evil\x1b\\ failed"}})
	for _, args := range [][]string{
		{"status", fmt.Sprint(n), "--json", "title,lastRun"},
		{"status", fmt.Sprint(n), "--json", "title,lastRun", "--jq", ".title, .lastRun.message"},
		{"status", fmt.Sprint(n), "--json", "title", "--template", "{{.title}}"},
		{"status", "--json", "title", "--jq", ".[].title"},
		{"status", "--json", "title", "--template", `{{range .}}{{.title}}{{end}}`},
	} {
		for _, tty := range []bool{true, false} {
			e.tty = tty
			if code := e.run(args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, e.stderr)
			}
			got := e.stdout.String()
			if strings.ContainsAny(got, "\x1b\x07\r\u009b\x7f") {
				t.Errorf("%v (terminal %v): a control character of the title reached the output: %q", args, tty, got)
			}
			if !strings.Contains(got, "^[]52;c;ZXZpbA==^G^[[2J^M") {
				t.Errorf("%v (terminal %v): the title is not shown in caret notation: %q", args, tty, got)
			}
		}
	}
	// The template's own colour is the person's: it stays.
	e.tty = true
	if code := e.run("status", fmt.Sprint(n), "--json", "title", "--template", `{{color "red" "x"}}`); code != 0 {
		t.Fatalf("exit %d: %s", code, e.stderr)
	}
	if got := e.stdout.String(); !strings.Contains(got, "\x1b[") {
		t.Errorf("the template's colour was lost: %q", got)
	}
}

// TestStatusUnowned: an issue whose ralph:build someone without write access added waits for a writer, as
// every sweep passes it over: status says why and what to do, in its text, its --json next and warnings,
// and the pipeline; once a writer's enroll added the label again, it says none of it.
func TestStatusUnowned(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.asUser("octocat")
	e.srv.SetPermission("octocat", "write")
	e.srv.SetTokenLogin("octocat")
	e.srv.SetPermission("mallory", "triage")
	n := e.srv.CreateIssue("mallory", "Mine", "")
	e.srv.AddLabel(n, workflow.LabelBuild, "mallory")
	e.srv.AddLabel(n, workflow.ReadyForPlan.Label(), githubtest.BotLogin)
	seedStatus(e, n, record.Record{Branch: "ralph/1-mine", Base: "main"})
	why := fmt.Sprintf("ralph:build was added by @mallory, who may not drive ralph: no sweep takes #%d until someone with write access runs gh ralph enroll %d", n, n)

	if code := e.run("status", fmt.Sprint(n)); code != 0 || !strings.Contains(e.stdout.String(), "warning\t"+why) ||
		!strings.Contains(e.stdout.String(), fmt.Sprintf("next\ta person with write access: ralph:build was added by @mallory, who may not drive ralph, so no sweep takes it; gh ralph enroll %d", n)) {
		t.Errorf("status %d: exit %d\n%s%s", n, code, e.stdout, e.stderr)
	}
	if code := e.run("status", fmt.Sprint(n), "--json", "next,warnings"); code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, e.stderr)
	}
	var got struct {
		Next     string   `json:"next"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Next, "a person with write access:") || !strings.Contains(strings.Join(got.Warnings, "\n"), why) {
		t.Errorf("status --json next,warnings = %+v", got)
	}
	if code := e.run("status"); code != 0 || !strings.Contains(e.stdout.String(), "a writer (enroll)") || !strings.Contains(e.stderr.String(), "warning: #1 "+why) {
		t.Errorf("status (the pipeline): exit %d\n%s%s", code, e.stdout, e.stderr)
	}

	if code := e.run("enroll", fmt.Sprint(n)); code != 0 {
		t.Fatalf("enroll: exit %d: %s", code, e.stderr)
	}
	for _, args := range [][]string{{"status", fmt.Sprint(n)}, {"status"}} {
		if code := e.run(args...); code != 0 || strings.Contains(e.stdout.String()+e.stderr.String(), "may not drive ralph") || strings.Contains(e.stdout.String(), "a writer") {
			t.Errorf("%s after a writer's enroll: exit %d\n%s%s", strings.Join(args, " "), code, e.stdout, e.stderr)
		}
	}
}

// TestStatusRunningAgrees: the text's running line and --json running are one value: a live run that holds
// the issue before its step put the running label on shows the step it takes in both; a running label that
// no run holds shows in neither.
func TestStatusRunningAgrees(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pipeline(e)
	e.now = clock
	n := e.srv.CreateIssue("mona", "Plan it", "", workflow.LabelBuild, workflow.ReadyForPlan.Label())
	seedStatus(e, n, record.Record{Branch: fmt.Sprintf("ralph/%d-plan-it", n), Base: "main"})
	lk := &lock.Locker{Refs: lock.RESTRefs{API: e.client()}, Lease: time.Hour, Now: func() time.Time { return clock },
		Holder: lock.Holder{Kind: "local", Host: "laptop", PID: 99, User: "mona"}, Alive: func(int) bool { return true }}
	lease, err := lk.Acquire(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lease.Release(context.Background()) })
	for _, tt := range []struct {
		issue int
		want  any // --json running
	}{
		{n, "plan-in-progress"},
		{6, nil}, // Research in Progress on, no run holds it
	} {
		if code := e.run("status", fmt.Sprint(tt.issue)); code != 0 {
			t.Fatalf("status %d: exit %d: %s", tt.issue, code, e.stderr)
		}
		text := e.stdout.String()
		if code := e.run("status", fmt.Sprint(tt.issue), "--json", "running"); code != 0 {
			t.Fatalf("status %d --json running: exit %d: %s", tt.issue, code, e.stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(e.stdout.String()), &got); err != nil {
			t.Fatal(err)
		}
		if got["running"] != tt.want {
			t.Errorf("status %d --json running = %v, want %v", tt.issue, got["running"], tt.want)
		}
		line := strings.Contains(text, "\nrunning\t")
		if line != (tt.want != nil) || tt.want != nil && !strings.Contains(text, "running\tPlan in Progress, by") {
			t.Errorf("status %d (--json running %v) says:\n%s", tt.issue, tt.want, text)
		}
	}
}

// TestStatusJSONFieldsList: --json with no fields lists, in gh's words, the fields of the form asked for:
// one issue's, or the pipeline's, not both mixed.
func TestStatusJSONFieldsList(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for _, tt := range []struct {
		args       []string
		want, also []string // fields listed; fields of the other form, not listed
	}{
		{[]string{"status", "--json"}, pipelineFields, []string{"lock", "phase", "running"}},
		{[]string{"status", "3", "--json"}, issueFields, []string{"ready", "since"}},
	} {
		code := e.run(tt.args...)
		got := e.stderr.String()
		if code != ExitUsage || !strings.HasPrefix(got, "Specify one or more comma-separated fields for `--json`:\n") {
			t.Errorf("%v: exit %d, stderr %q; want gh's list of fields", tt.args, code, got)
		}
		for _, f := range tt.want {
			if !strings.Contains(got, "\n  "+f+"\n") {
				t.Errorf("%v does not list %s:\n%s", tt.args, f, got)
			}
		}
		for _, f := range tt.also {
			if strings.Contains(got, "\n  "+f+"\n") {
				t.Errorf("%v lists %s, a field of the other form:\n%s", tt.args, f, got)
			}
		}
	}
}
