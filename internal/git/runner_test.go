package git

import (
	"context"
	"errors"
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
