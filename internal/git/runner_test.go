package git

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestExecRunnerCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.runner.Run(ctx, f.checkout, nil, "status")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestCommandErrorNamesOnlyTheSubcommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.runner.Run(context.Background(), f.checkout, nil, "-c", "x.y=secret", "rev-parse", "--verify", "no-such-ref")
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "git rev-parse: fatal: Needed a single revision") {
		t.Errorf("error = %v, want a CommandError naming rev-parse with its stderr", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error prints the command line: %v", err)
	}
}

func TestSubcommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"push", "x"}, "push"},
		{[]string{"-c", "a=b", "-c", "http.extraHeader=AUTHORIZATION: basic xyz", "fetch"}, "fetch"},
		{[]string{"-C", "/dir", "--no-pager", "log"}, "log"},
		{[]string{"-c"}, "(no subcommand)"},
		{nil, "(no subcommand)"},
	}
	for _, tt := range tests {
		if got := subcommand(tt.args); got != tt.want {
			t.Errorf("subcommand(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestExecRunnerEnvironment: git gets only the variables of ralph's environment it needs, then what ralph
// passes; never an action input, a token or one of git's own variables. git shows its environment to a
// `!` alias, which is how this test reads it.
func TestExecRunnerEnvironment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ralph := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/ralph/home", "LC_CTYPE=C.UTF-8", "TZ=UTC",
		"HTTPS_PROXY=http://proxy:3128", "SSL_CERT_FILE=/etc/ca.pem", "GIT_SSL_CAINFO=/etc/git-ca.pem",
		"INPUT_TOKEN=ralph-secret", "GITHUB_TOKEN=ralph-secret", "GH_TOKEN=ralph-secret",
		"ACTIONS_RUNTIME_TOKEN=ralph-secret", "ANTHROPIC_API_KEY=ralph-secret", "GITHUB_ENV=/runner/set_env",
		"GIT_DIR=/elsewhere", "GIT_SSL_NO_VERIFY=1", "GIT_CONFIG_PARAMETERS='core.hookspath'='/evil'",
	}
	runner := ExecRunner{Environ: func() []string { return ralph }, Env: []string{"XDG_CONFIG_HOME=/ralph/config"}}
	out, err := runner.Run(context.Background(), f.root, []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		"-c", "alias.env=!env", "env")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			got[k] = v
		}
	}
	for k, want := range map[string]string{
		"HOME": "/ralph/home", "LC_CTYPE": "C.UTF-8", "TZ": "UTC", "HTTPS_PROXY": "http://proxy:3128",
		"SSL_CERT_FILE": "/etc/ca.pem", "GIT_SSL_CAINFO": "/etc/git-ca.pem", "XDG_CONFIG_HOME": "/ralph/config",
		"GIT_CONFIG_GLOBAL": "/dev/null",
	} {
		if got[k] != want {
			t.Errorf("git's %s = %q, want %q", k, got[k], want)
		}
	}
	for _, k := range []string{"INPUT_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ANTHROPIC_API_KEY", "GITHUB_ENV", "GIT_DIR", "GIT_SSL_NO_VERIFY"} {
		if v, ok := got[k]; ok {
			t.Errorf("git's environment has %s=%q", k, v)
		}
	}
	if strings.Contains(string(out), "ralph-secret") || strings.Contains(string(out), "/evil") {
		t.Errorf("git's environment holds a secret of ralph's or git's own variables:\n%s", out)
	}
}
