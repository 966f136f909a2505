package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// reported is an outcome its door already reported, as the action's ExitError is.
type reported struct{ code int }

func (e *reported) Error() string   { return "reported" }
func (e *reported) ExitStatus() int { return e.code }

// An error that carries its exit status was reported already: Exit prints nothing and exits with it. A
// command that failed (exec.ExitError has an ExitCode) is not reported yet.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if got := Exit(fmt.Errorf("action: %w", &reported{code: 4}), &stderr); got != 4 || stderr.Len() != 0 {
		t.Errorf("reported: exit %d, printed %q; want 4 and nothing", got, stderr.String())
	}
	err := exec.Command("false").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("false: %v", err)
	}
	if got := Exit(fmt.Errorf("gh secret set: %w", err), &stderr); got != ExitError || stderr.Len() == 0 {
		t.Errorf("a failed command: exit %d, printed %q; want %d and the error", got, stderr.String(), ExitError)
	}
}

// `gh-ralph action` runs the door main gives, on the Factory's environment and standard output, and exits
// with the status it reported.
func TestActionCommand(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	var gotToken string
	f := &Factory{
		Getenv: func(k string) string { return map[string]string{"INPUT_TOKEN": "t"}[k] }, Environ: func() []string { return []string{"A=1"} },
		Stdout: &stdout, Stderr: &stderr,
		RunAction: func(_ context.Context, getenv func(string) string, environ []string, out io.Writer) error {
			gotToken = getenv("INPUT_TOKEN")
			fmt.Fprintf(out, "%v\n", environ)
			return &reported{code: 4}
		},
	}
	if got := Exit(Execute(context.Background(), f, []string{"action"}), &stderr); got != 4 {
		t.Errorf("exit %d, want the action's 4", got)
	}
	if gotToken != "t" || stdout.String() != "[A=1]\n" || stderr.Len() != 0 {
		t.Errorf("token %q, stdout %q, stderr %q", gotToken, stdout.String(), stderr.String())
	}
}

// gh ralph advance says a step's failure from its Result, never from the error's shape: a failure the
// engine recorded (Result.Recorded) says where it left the issue and what goes on from there; GitHub
// failing for a while says to run again; a step error the engine did not record (its writing failed) is
// said as the error it is, and is not told to be on the issue. Exit codes stay 1.
func TestStepFailure(t *testing.T) {
	t.Parallel()
	stepErr := &engine.StepError{Step: "research", Reason: "the agent exited 3"}
	outage := &ghapi.Error{Method: "POST", Path: "/repos/o/r/issues/7/comments", Status: 502, Message: "Bad Gateway"}
	tests := []struct {
		name    string
		res     engine.Result
		err     error
		want    string // what Exit prints; "" for no error
		notWant string
	}{
		{name: "done", res: engine.Result{Issue: 7, Step: workflow.Research}},
		{name: "recorded, stays", res: engine.Result{Issue: 7, State: workflow.ResearchNeeded, Recorded: true}, err: stepErr,
			want: "#7 stays in Research Needed; the failure is on the issue. Run `gh ralph status 7` to see it, `gh ralph advance 7` to try again."},
		{name: "recorded, human needed", res: engine.Result{Issue: 7, State: workflow.HumanNeeded, Recorded: true}, err: stepErr,
			want: "#7 is now Human Needed; the failure is on the issue. Run `gh ralph status 7` to see it, and `gh ralph retry 7` once it is dealt with."},
		{name: "not recorded", res: engine.Result{Issue: 7, State: workflow.ResearchNeeded}, err: errors.Join(stepErr, errors.New("writing the record: boom")),
			want: "error: ", notWant: "the failure is on the issue"},
		{name: "transient", res: engine.Result{Issue: 7, State: workflow.ResearchInProgress}, err: fmt.Errorf("commenting: %w", outage),
			want: "error: GitHub failed for a while, so the step did not finish"},
		{name: "other", res: engine.Result{Issue: 7}, err: errors.New("boom"), want: "error: boom\n", notWant: "GitHub failed"},
	}
	for _, tt := range tests {
		err := stepFailure(7, tt.res, tt.err)
		if (err == nil) != (tt.err == nil) {
			t.Fatalf("%s: stepFailure = %v", tt.name, err)
		}
		var buf bytes.Buffer
		code := Exit(err, &buf)
		if tt.err == nil {
			if code != ExitOK || buf.Len() != 0 {
				t.Errorf("%s: exit %d, printed %q", tt.name, code, buf.String())
			}
			continue
		}
		if code != ExitError || !strings.Contains(buf.String(), tt.want) || tt.notWant != "" && strings.Contains(buf.String(), tt.notWant) {
			t.Errorf("%s: exit %d, printed %q; want %d and %q (not %q)", tt.name, code, buf.String(), ExitError, tt.want, tt.notWant)
		}
	}
}

// gh ralph approve, reject, retry, fix and enroll say a failure the engine recorded (Result.Recorded) as one
// that is on the issue, from the Result; a failure it did not record is said as the error it is.
func TestCommandFailure(t *testing.T) {
	t.Parallel()
	stepErr := &engine.StepError{Step: "plan", Reason: "the agent exited 3"}
	tests := []struct {
		name    string
		res     engine.Result
		err     error
		want    string
		notWant string
	}{
		{name: "recorded", res: engine.Result{Issue: 7, Recorded: true}, err: stepErr, want: "The failure is on the issue: gh ralph status shows it."},
		{name: "not recorded", res: engine.Result{Issue: 7}, err: errors.Join(stepErr, errors.New("writing the record: boom")), want: "error: ", notWant: "The failure is on the issue"},
		{name: "refused", res: engine.Result{Issue: 7}, err: &engine.RefusedError{Login: "eve", Action: engine.ActApprove}, want: "@eve may not approve", notWant: "The failure is on the issue"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if code := Exit(commandFailure(tt.res, tt.err), &buf); code != ExitError || !strings.Contains(buf.String(), tt.want) || tt.notWant != "" && strings.Contains(buf.String(), tt.notWant) {
			t.Errorf("%s: exit %d, printed %q; want %d and %q (not %q)", tt.name, code, buf.String(), ExitError, tt.want, tt.notWant)
		}
	}
	// gh ralph sweep joins each issue's failure, as it is said from its Result.
	var buf bytes.Buffer
	swept := errors.Join(fmt.Errorf("#7: %w", commandFailure(engine.Result{Issue: 7, Recorded: true}, stepErr)), fmt.Errorf("#8: %w", errors.New("reading #8: boom")))
	if code := Exit(swept, &buf); code != ExitError || !strings.Contains(buf.String(), "The failure is on the issue") {
		t.Errorf("a sweep's joined failures: exit %d, printed %q; want %d and the recorded one said as on the issue", code, buf.String(), ExitError)
	}
	if err := commandFailure(engine.Result{Issue: 7, Step: workflow.Approve}, nil); err != nil {
		t.Errorf("a command done: %v", err)
	}
}
