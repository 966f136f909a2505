package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// parse runs cmd (built with a runF that records its options) on args, under a root with -R, as
// gh ralph's root does.
func parse(t *testing.T, cmd *cobra.Command, args []string) error {
	t.Helper()
	f := &Factory{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard}
	root := NewCmdRoot(f)
	// Replace the real command with the one under test.
	for _, c := range root.Commands() {
		if c.Name() == cmd.Name() {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(cmd)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	return root.ExecuteContext(context.Background())
}

func wantUsage(t *testing.T, err error, wantMsg string) {
	t.Helper()
	var fe *FlagError
	var je *jsonFieldsError
	switch {
	case errors.As(err, &fe):
		if !strings.Contains(fe.Error(), wantMsg) {
			t.Errorf("usage error %q, want it to say %q", fe.Error(), wantMsg)
		}
		if !strings.Contains(fe.Usage, "Usage:") {
			t.Errorf("usage error carries no usage: %q", fe.Usage)
		}
	case errors.As(err, &je):
		if !strings.Contains(je.Error(), wantMsg) {
			t.Errorf("--json error %q, want it to say %q", je.Error(), wantMsg)
		}
	default:
		t.Errorf("got %v (%T), want a usage error saying %q", err, err, wantMsg)
	}
}

func TestAdvanceFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    AdvanceOptions
		wantErr string
	}{
		{args: []string{"47"}, want: AdvanceOptions{Issue: 47}},
		{args: []string{"#47", "--dry-run"}, want: AdvanceOptions{Issue: 47, DryRun: true}},
		{args: []string{"47", "--until", "in-review"}, want: AdvanceOptions{Issue: 47, Until: workflow.InReview}},
		{args: []string{"47", "--until", "ralph:plan-in-review"}, want: AdvanceOptions{Issue: 47, Until: workflow.PlanInReview}},
		{args: []string{"47", "--until", "Human Needed"}, want: AdvanceOptions{Issue: 47, Until: workflow.HumanNeeded}},
		{args: []string{"47", "-R", "octo/other"}, want: AdvanceOptions{Issue: 47, Repo: "octo/other"}},
		{args: []string{"47", "--until", "reviewing"}, wantErr: "unknown state \"reviewing\" for --until; use one of: backlog, research-needed"},
		{args: []string{}, wantErr: "an issue number is required"},
		{args: []string{"x"}, wantErr: `"x" is not an issue number`},
		{args: []string{"0"}, wantErr: `"0" is not an issue number`},
		{args: []string{"1", "2"}, wantErr: "too many arguments"},
		{args: []string{"1", "--bogus"}, wantErr: "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *AdvanceOptions
			err := parse(t, NewCmdAdvance(&Factory{}, func(_ context.Context, o *AdvanceOptions) error { got = o; return nil }), tt.args)
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

func TestStatusFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    StatusOptions
		wantErr string
	}{
		{args: nil, want: StatusOptions{Stale: 72 * time.Hour}},
		{args: []string{"47"}, want: StatusOptions{Issue: 47, Stale: 72 * time.Hour}},
		{args: []string{"--stale", "24h"}, want: StatusOptions{Stale: 24 * time.Hour}},
		{args: []string{"47", "--json", "state,phase"}, want: StatusOptions{Issue: 47, Stale: 72 * time.Hour, Exporter: exporter{Fields: []string{"state", "phase"}}}},
		{args: []string{"--json", "number", "--jq", ".[].number"}, want: StatusOptions{Stale: 72 * time.Hour, Exporter: exporter{Fields: []string{"number"}, JQ: ".[].number"}}},
		{args: []string{"--json", "number", "-t", "{{.}}"}, want: StatusOptions{Stale: 72 * time.Hour, Exporter: exporter{Fields: []string{"number"}, Template: "{{.}}"}}},
		{args: []string{"47", "--json"}, wantErr: "Specify one or more comma-separated fields for `--json`:\n  artifacts\n  branch"},
		{args: []string{"47", "--json", "phase,nope"}, wantErr: `unknown JSON field: "nope"`},
		{args: []string{"--json", "phase"}, wantErr: `"phase" is a field of one issue's status: gh ralph status <issue> --json phase`}, // an issue field, not a pipeline one
		{args: []string{"--json", "number,artifacts"}, wantErr: `"artifacts" is a field of one issue's status: gh ralph status <issue> --json number,artifacts`},
		{args: []string{"47", "--json", "ready"}, wantErr: `"ready" is a field of the pipeline: gh ralph status --json ready`},
		{args: []string{"--jq", "."}, wantErr: "cannot use `--jq` without specifying `--json`"},
		{args: []string{"--template", "x"}, wantErr: "cannot use `--template` without specifying `--json`"},
		{args: []string{"--json", "number", "--jq", ".", "--template", "x"}, wantErr: "only one of `--jq` or `--template`"},
		{args: []string{"--stale", "0s"}, wantErr: "--stale must be more than zero"},
		{args: []string{"a"}, wantErr: `"a" is not an issue number`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *StatusOptions
			err := parse(t, NewCmdStatus(&Factory{}, func(_ context.Context, o *StatusOptions) error { got = o; return nil }), tt.args)
			if tt.wantErr != "" {
				wantUsage(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(exporter{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPersonFlags(t *testing.T) {
	type opts struct {
		Repo    string
		Issue   int
		Reason  string
		Advance bool
	}
	tests := []struct {
		cmd     string
		args    []string
		want    opts
		wantErr string
	}{
		{cmd: "enroll", args: []string{"3"}, want: opts{Issue: 3}},
		{cmd: "enroll", args: []string{"3", "--advance", "-R", "o/r"}, want: opts{Issue: 3, Advance: true, Repo: "o/r"}},
		{cmd: "enroll", args: nil, wantErr: "an issue number is required"},
		{cmd: "approve", args: []string{"3"}, want: opts{Issue: 3}},
		{cmd: "approve", args: []string{"3", "--advance"}, want: opts{Issue: 3, Advance: true}},
		{cmd: "approve", args: []string{"three"}, wantErr: `"three" is not an issue number`},
		{cmd: "reject", args: []string{"3", "--reason", "too big"}, want: opts{Issue: 3, Reason: "too big"}},
		{cmd: "reject", args: []string{"3", "-r", "split it", "--advance"}, want: opts{Issue: 3, Reason: "split it", Advance: true}},
		{cmd: "reject", args: []string{"3"}, wantErr: "--reason is required"},
		{cmd: "reject", args: []string{"3", "--reason", "  "}, wantErr: "--reason is required"},
		{cmd: "retry", args: []string{"3"}, want: opts{Issue: 3}},
		{cmd: "retry", args: []string{"3", "4"}, wantErr: "too many arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var got *opts
			var cmd *cobra.Command
			switch tt.cmd {
			case "enroll":
				cmd = NewCmdEnroll(&Factory{}, func(_ context.Context, o *EnrollOptions) error {
					got = &opts{Repo: o.Repo, Issue: o.Issue, Advance: o.Advance}
					return nil
				})
			case "approve":
				cmd = NewCmdApprove(&Factory{}, func(_ context.Context, o *ApproveOptions) error {
					got = &opts{Repo: o.Repo, Issue: o.Issue, Advance: o.Advance}
					return nil
				})
			case "reject":
				cmd = NewCmdReject(&Factory{}, func(_ context.Context, o *RejectOptions) error {
					got = &opts{Repo: o.Repo, Issue: o.Issue, Reason: o.Reason, Advance: o.Advance}
					return nil
				})
			case "retry":
				cmd = NewCmdRetry(&Factory{}, func(_ context.Context, o *RetryOptions) error {
					got = &opts{Repo: o.Repo, Issue: o.Issue, Advance: o.Advance}
					return nil
				})
			}
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

func TestSweepAndInitFlags(t *testing.T) {
	sweeps := []struct {
		args    []string
		want    SweepOptions
		wantErr string
	}{
		{args: nil, want: SweepOptions{}},
		{args: []string{"--max", "2", "--dry-run"}, want: SweepOptions{Max: 2, DryRun: true}},
		{args: []string{"--max", "0"}, wantErr: "--max must be at least 1"},
		{args: []string{"5"}, wantErr: `unexpected argument "5"`},
	}
	for _, tt := range sweeps {
		t.Run("sweep "+strings.Join(tt.args, " "), func(t *testing.T) {
			var got *SweepOptions
			err := parse(t, NewCmdSweep(&Factory{}, func(_ context.Context, o *SweepOptions) error { got = o; return nil }), tt.args)
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
	inits := []struct {
		args    []string
		want    InitOptions
		wantErr string
	}{
		{args: nil, want: InitOptions{}},
		{args: []string{"--force"}, want: InitOptions{Force: true}},
		{args: []string{"now"}, wantErr: `unexpected argument "now"`},
	}
	for _, tt := range inits {
		t.Run("init "+strings.Join(tt.args, " "), func(t *testing.T) {
			var got *InitOptions
			err := parse(t, NewCmdInit(&Factory{}, func(_ context.Context, o *InitOptions) error { got = o; return nil }), tt.args)
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

// Every command has help with examples, and completion exists.
func TestHelpHasExamples(t *testing.T) {
	root := NewCmdRoot(&Factory{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("%s has no examples", c.Name())
		}
		if c.Long == "" {
			t.Errorf("%s has no long help", c.Name())
		}
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "bash completion V2 for gh-ralph") {
		t.Errorf("completion bash printed %q…", out.String()[:min(80, out.Len())])
	}
	for _, want := range []string{"advance", "status", "enroll", "approve", "reject", "retry", "sweep", "init", "action"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("no %s command (have %v)", want, names)
		}
	}
}

// The help texts and the README say the same of where gh ralph works, and the README lists every
// command the root has.
func TestHelpAgreesWithReadme(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	root := NewCmdRoot(&Factory{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
	advance, _, _ := root.Find([]string{"advance"})
	for name, text := range map[string]string{"root help": root.Long, "advance help": advance.Long, "README": string(readme)} {
		if !strings.Contains(flat(text), flat(whereText)) {
			t.Errorf("%s does not say where gh ralph works as the others do:\n%s", name, whereText)
		}
		for _, stale := range []string{"under the repository's git directory", "worktrees/<repo>", "in a git worktree"} {
			if strings.Contains(flat(text), stale) {
				t.Errorf("%s still says %q", name, stale)
			}
		}
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Name() == "action" {
			continue
		}
		if !strings.Contains(string(readme), "`gh ralph "+c.Name()) {
			t.Errorf("the README's gh ralph table has no %s", c.Name())
		}
	}
}

// A usage error says what was wrong and the one-line usage, not the whole help.
func TestUsageErrorIsShort(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	if code := e.run("advance"); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if got, want := e.stderr.String(), "an issue number is required\n\nUsage: gh ralph advance <issue> [flags]\nRun 'gh ralph advance --help' for more.\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// An unknown flag of a command is that command's usage error: its usage, not the root's list of commands.
func TestUnknownFlagUsage(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	if code := e.run("status", "--bogus"); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if got, want := e.stderr.String(), "unknown flag: --bogus\n\nUsage: gh ralph status [<issue>] [flags]\nRun 'gh ralph status --help' for more.\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// sweep --help and the README give the same order: issues with a priority: label first, then the oldest.
func TestSweepHelpOrder(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	help := NewCmdSweep(&Factory{}, nil).Long
	for name, text := range map[string]string{"README.md": strings.Join(strings.Fields(string(readme)), " "), "sweep --help": strings.Join(strings.Fields(help), " ")} {
		p, o := strings.Index(text, "priority:"), strings.Index(text, "then the oldest")
		if p < 0 || o < 0 || p > o {
			t.Errorf("%s does not say: a priority: label first, then the oldest", name)
		}
	}
}

// -R is listed by the commands that work on a repository, and by no other (as gh does).
func TestRepoFlagOnlyWhereItActs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"demo", "--help"}, false},
		{[]string{"version", "--help"}, false},
		{[]string{"completion", "--help"}, false},
		{[]string{"completion", "bash", "--help"}, false},
		{[]string{"action", "--help"}, false},
		{[]string{"status", "--help"}, true},
		{[]string{"advance", "--help"}, true},
		{[]string{"enroll", "--help"}, true},
		{[]string{"sweep", "--help"}, true},
		{[]string{"doctor", "--help"}, true},
		{[]string{"init", "--help"}, true},
		{[]string{"approve", "--help"}, true},
		{[]string{"reject", "--help"}, true},
		{[]string{"retry", "--help"}, true},
		{[]string{"fix", "--help"}, true},
	} {
		e := newTestEnv(t)
		if code := e.run(tt.args...); code != 0 {
			t.Fatalf("%v: exit %d, stderr %s", tt.args, code, e.stderr)
		}
		if got := strings.Contains(e.stdout.String(), "-R, --repo"); got != tt.want {
			t.Errorf("%v lists -R: %v, want %v:\n%s", tt.args, got, tt.want, e.stdout)
		}
	}
}
