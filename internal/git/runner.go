// Package git is ralph's own git repository: fetches, trees, commits and pushes, by running the git CLI
// through an injected Runner, with no config but the repository's own and the push token only ever in
// git's environment.
package git

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Runner runs one git command in dir. env holds extra KEY=VALUE entries for that
// command only. It returns the command's standard output; when the command fails,
// the error carries its standard error text, and stdout is still returned so that
// callers can read machine-readable output of a failed command (git push --porcelain).
type Runner interface {
	Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error)
}

// ExecRunner runs the git binary. Env is appended to the process environment
// before the per-command env, so tests can give git a private HOME without
// touching the process environment.
type ExecRunner struct {
	Env  []string
	Path string // the git binary; "" means "git" from PATH
}

var _ Runner = ExecRunner{}

// Run runs git and kills it when ctx ends.
func (e ExecRunner) Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	path := e.Path
	if path == "" {
		path = "git"
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append(append(inherited(), e.Env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// git may leave helpers (remote-https, pack-objects) holding our pipes after
	// it is killed; do not wait for them forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return stdout.Bytes(), &CommandError{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// inherited is ralph's environment without git's own variables (GIT_DIR, GIT_TRACE2_*, GIT_CONFIG_*…),
// so that git's behaviour depends only on what ralph passes.
func inherited() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// CommandError is a failed git command.
type CommandError struct {
	Args   []string
	Stderr string
	Err    error // *exec.ExitError, or the context's error when it was cancelled
}

func (e *CommandError) Error() string {
	msg := "git " + subcommand(e.Args)
	if s := lastBytes(strings.TrimSpace(e.Stderr), 2048); s != "" {
		msg += ": " + s
	}
	return msg + ": " + e.Err.Error()
}

func (e *CommandError) Unwrap() error { return e.Err }

// subcommand names the git subcommand in args, skipping global options, so that
// error messages never need to print the full command line (which may hold the
// auth header).
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "(no subcommand)"
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// redactor replaces secret strings with ***.
type redactor []string

func (r redactor) string(s string) string {
	for _, secret := range r {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return s
}

// error returns err with every secret removed from its text. A CommandError keeps
// its type (and its Unwrap to the exit or context error, which hold no text from
// the command); any other error is flattened to its redacted message, because
// its wrapped errors could still reveal the secret.
func (r redactor) error(err error) error {
	if err == nil {
		return nil
	}
	var ce *CommandError
	if errors.As(err, &ce) {
		args := make([]string, len(ce.Args))
		for i, a := range ce.Args {
			args[i] = r.string(a)
		}
		inner := ce.Err
		if inner != nil && r.string(inner.Error()) != inner.Error() {
			inner = errors.New(r.string(inner.Error()))
		}
		if inner == nil {
			inner = errors.New("failed")
		}
		return &CommandError{Args: args, Stderr: r.string(ce.Stderr), Err: inner}
	}
	msg := err.Error()
	if red := r.string(msg); red != msg {
		return errors.New(red)
	}
	return err
}
