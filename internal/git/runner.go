// Package git is ralph's own git repository: fetches, trees, commits and pushes, by running the git CLI
// through an injected Runner, with no config but the repository's own and the push token only ever in
// git's environment.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// InputRunner is a Runner that can also give a command its standard input.
type InputRunner interface {
	Runner
	RunInput(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error)
}

// ExecRunner runs the git binary. git's environment is an allowlist: the variables of ralph's own
// environment that git needs (see [Allowed]), then Env (so that tests can give git a private HOME), then
// the per-command env. No other variable of ralph's (INPUT_*, a token) ever reaches git.
type ExecRunner struct {
	Env  []string
	Path string // the git binary; "" means "git" from PATH
	// Environ is ralph's own environment, which Allowed filters; nil means the process's (os.Environ).
	Environ func() []string
}

var _ InputRunner = ExecRunner{}

// Run runs git and kills it when ctx ends.
func (e ExecRunner) Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return e.RunInput(ctx, dir, env, nil, args...)
}

// RunInput is Run with stdin as git's standard input.
func (e ExecRunner) RunInput(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	path := e.Path
	if path == "" {
		path = "git"
	}
	environ := e.Environ
	if environ == nil {
		environ = os.Environ
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append(append(Allowed(environ()), e.Env...), env...)
	cmd.Stdin = stdin
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

// allowed are the variables of ralph's environment that git gets: what it needs to find programs (PATH;
// ssh for an ssh remote, with the user's agent), a home of ralph's own (config files are off: see baseEnv
// and hardening), temporary files, the locale and time zone, and the network (proxies, CA bundles: git's
// own GIT_SSL_CAINFO and GIT_SSL_CAPATH are the only GIT_ variables taken, as a user's CA has no other way
// in with the global config off). Nothing else: no INPUT_*, GITHUB_TOKEN, GH_TOKEN, ACTIONS_* or other
// secret, and none of git's variables that steer it (GIT_DIR, GIT_CONFIG_*, GIT_SSL_NO_VERIFY…). The push
// credential reaches git only through the per-command env ralph passes.
var allowed = map[string]bool{
	"PATH": true, "HOME": true, "TMPDIR": true, "TZ": true, "LANG": true, "LANGUAGE": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true,
	"SSH_AUTH_SOCK": true,
}

// Allowed is the part of environ (KEY=VALUE entries) that git may see.
func Allowed(environ []string) []string {
	var env []string
	for _, kv := range environ {
		key, _, ok := strings.Cut(kv, "=")
		if ok && (allowed[key] || strings.HasPrefix(key, "LC_")) {
			env = append(env, kv)
		}
	}
	return env
}

// runInput runs a command with stdin through runner, which must be able to give it one.
func runInput(ctx context.Context, runner Runner, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	ir, ok := runner.(InputRunner)
	if !ok {
		return nil, fmt.Errorf("git %s: the runner cannot give a command its input", subcommand(args))
	}
	return ir.RunInput(ctx, dir, env, stdin, args...)
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
