package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"testing"
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
