package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Exit codes, as gh uses them where gh has one.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitAuth        = ghapi.ExitAuth
	ExitInterrupted = 130
)

// FlagError is a usage error: a bad flag or argument. Exit prints it with Usage: the command's one-line
// usage and where its help is (shortUsage), not the whole help.
type FlagError struct {
	Err   error
	Usage string
}

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

func flagErrorf(cmd *cobra.Command, format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...), Usage: shortUsage(cmd)}
}

// shortUsage is a command's usage line and how to see its help.
func shortUsage(cmd *cobra.Command) string {
	return "Usage: " + cmd.UseLine() + "\nRun '" + cmd.CommandPath() + " --help' for more.\n"
}

// InterruptedError: the user pressed Ctrl-C (or the process got SIGTERM) while the command ran. Issue,
// when set, is the issue whose step was stopped.
type InterruptedError struct {
	Err   error
	Issue int
}

func (e *InterruptedError) Error() string { return "interrupted: " + e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// transientError: a step of Issue stopped on GitHub failing for a while (engine.Transient), after the
// client's own retries. What the step did is kept where a rerun finds it, so the rerun is what to do.
type transientError struct {
	Issue int
	Err   error
}

func (e *transientError) Error() string { return e.Err.Error() }
func (e *transientError) Unwrap() error { return e.Err }

// recordedError: a person's command, or the step it ran, failed, and ralph recorded the failure on the
// issue (engine.Result.Recorded): its status comment says what comes next.
type recordedError struct{ Err error }

func (e *recordedError) Error() string { return e.Err.Error() }
func (e *recordedError) Unwrap() error { return e.Err }

// Exit maps an error to an exit code, printing it (with a hint where there is one) unless the command
// already reported it. It is the one place that decides how a failure looks to the user.
func Exit(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	// An error may quote what others wrote (an issue's title, a host the agent asked for, GitHub's own
	// message): what reaches the terminal is inert.
	stderr = inertWriter{stderr}
	var (
		reported exitStatus
		flagErr  *FlagError
		authErr  *ghapi.AuthError
		intr     *InterruptedError
		refused  *engine.RefusedError
		input    *engine.InputError
		apiErr   *ghapi.Error
		failed   *failedStepError
		recorded *recordedError
		jsonErr  *jsonFieldsError
		startErr *doctor.StartError
		transErr *transientError
	)
	switch {
	case errors.As(err, &reported):
		return reported.ExitStatus()
	case errors.As(err, &intr) && intr.Issue != 0:
		// Stopped anywhere in the step: the agent, ralph's commit and push, or its writes on the issue.
		fmt.Fprintf(stderr, "interrupted: the step of #%d was stopped (its agent too, if it was working).\n"+
			"Run `gh ralph advance %d` to go on: it picks up what this run had finished (gh ralph status %d says where the issue is).\n", intr.Issue, intr.Issue, intr.Issue)
		return ExitInterrupted
	case errors.As(err, &intr), errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "interrupted: the agent was stopped; the issue's status comment says where it is (gh ralph status)")
		return ExitInterrupted
	case errors.As(err, &jsonErr):
		fmt.Fprintln(stderr, jsonErr.Error())
		return ExitUsage
	case errors.As(err, &flagErr):
		fmt.Fprintf(stderr, "%v\n\n%s", flagErr.Err, flagErr.Usage)
		if !strings.HasSuffix(flagErr.Usage, "\n") {
			fmt.Fprintln(stderr)
		}
		return ExitUsage
	case errors.As(err, &authErr):
		hint := authErr.Hint
		if hint == "" {
			hint = authHint(authErr.Host, func(string) string { return "" })
		}
		fmt.Fprintf(stderr, "%v\n%s\n", authErr.Err, hint)
		return ExitAuth
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
		// gh's own words for a token GitHub refuses.
		fmt.Fprintf(stderr, "%v\nTry authenticating with:  gh auth login\n(or check GH_TOKEN, GH_ENTERPRISE_TOKEN for GitHub Enterprise Server)\n", err)
		return ExitAuth
	case errors.As(err, &startErr):
		fmt.Fprintln(stderr, "the agent cannot run here, so ralph left the issue alone:")
		for _, p := range startErr.Problems {
			fmt.Fprintf(stderr, "  %s\n", p)
		}
		fmt.Fprintln(stderr, "Nothing on the issue changed. gh ralph doctor checks the rest of the setup.")
		return ExitError
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "%v; nothing was done\n", refused)
		return ExitError
	case errors.Is(err, engine.ErrNotEnrolled):
		fmt.Fprintf(stderr, "%v (gh ralph enroll N)\n", err)
		return ExitError
	case errors.As(err, &input):
		fmt.Fprintln(stderr, input.Msg)
		return ExitError
	case errors.As(err, &transErr):
		fmt.Fprintf(stderr, "error: GitHub failed for a while, so the step did not finish: %v\nRun `gh ralph advance %d` again once GitHub answers: it goes on from where this run stopped.\n", transErr.Err, transErr.Issue)
		return ExitError
	case errors.As(err, &failed):
		fmt.Fprintf(stderr, "%v\n%s\n", failed.Err, failed.next())
		return ExitError
	case errors.As(err, &recorded):
		fmt.Fprintf(stderr, "%v\nThe failure is on the issue: gh ralph status shows it.\n", err)
		return ExitError
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return ExitError
}

// failedStepError is a step that failed in gh ralph advance: the issue and the state the failure left it in,
// so that what to do next is said for that state.
type failedStepError struct {
	Issue int
	State workflow.State
	Err   error
}

func (e *failedStepError) Error() string { return e.Err.Error() }
func (e *failedStepError) Unwrap() error { return e.Err }

// next says where the failure left the issue and the command that goes on from there.
func (e *failedStepError) next() string {
	if e.State == workflow.HumanNeeded {
		return fmt.Sprintf("#%d is now Human Needed; the failure is on the issue. Run `gh ralph status %d` to see it, and `gh ralph retry %d` once it is dealt with.", e.Issue, e.Issue, e.Issue)
	}
	where := "where it was"
	if e.State != "" {
		where = "in " + e.State.Title()
	}
	return fmt.Sprintf("#%d stays %s; the failure is on the issue. Run `gh ralph status %d` to see it, `gh ralph advance %d` to try again.", e.Issue, where, e.Issue, e.Issue)
}

// authHint is what gh itself says to someone who is not logged in: in a workflow, in other automation, and
// at a terminal (with the host, when it is not github.com, and its variable).
func authHint(host string, getenv func(string) string) string {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return "gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable. Example:\n  env:\n    GH_TOKEN: ${{ github.token }}"
	case getenv("CI") != "":
		return "gh: To use GitHub CLI in automation, set the GH_TOKEN environment variable."
	case host != "" && host != "github.com":
		return "To get started with GitHub CLI, please run:  gh auth login --hostname " + host + "\n" +
			"Alternatively, populate the GH_ENTERPRISE_TOKEN environment variable with a GitHub API authentication token."
	}
	return "To get started with GitHub CLI, please run:  gh auth login\n" +
		"Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token."
}

// exitStatus is an outcome already reported (the action's ExitError, silentExit), which asks for the exit
// status it carries. The method is not exec.ExitError's ExitCode: a command gh ralph ran that failed is
// not reported yet.
type exitStatus interface{ ExitStatus() int }

// silentExit carries an exit code for an outcome the command already printed.
type silentExit struct{ code int }

func (e *silentExit) Error() string   { return "exit " + strconv.Itoa(e.code) }
func (e *silentExit) ExitStatus() int { return e.code }

func isUnknownCommand(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ") || strings.HasPrefix(err.Error(), "unknown shorthand flag") ||
		strings.HasPrefix(err.Error(), "unknown flag")
}

// noArgs and issueArg are cobra argument checks that fail as usage errors.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return flagErrorf(cmd, "unexpected argument %q", args[0])
	}
	return nil
}

func issueArg(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return flagErrorf(cmd, "an issue number is required")
	case 1:
		_, err := parseIssue(args[0])
		if err != nil {
			return &FlagError{Err: err, Usage: shortUsage(cmd)}
		}
		return nil
	}
	return flagErrorf(cmd, "too many arguments: one issue number, please")
}

// parseIssue reads "47" or "#47".
func parseIssue(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s), "#"))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not an issue number", s)
	}
	return n, nil
}

// inertWriter writes each write made inert (inert.String): for whole lines of ralph's that quote others.
type inertWriter struct{ w io.Writer }

func (w inertWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, inert.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
