package git

import (
	"context"
	"errors"
	"strings"
	"time"
)

// NetRetry bounds how ralph repeats a git command that talks to the remote (ls-remote, fetch, push) when
// it failed on what the network or the host said is passing: a 5xx or 429 answer, a connection that broke.
// Repeating each is safe: a read reads again, and every push ralph makes is a compare-and-swap that
// succeeds when the remote is already where it was to go (a push whose answer was lost went through).
//
// A push gets more tries than a read: in the Action (a fresh runner each run) the commit it carries, the
// agent's work, cannot be kept for the next run, so a push given up is an agent run done again.
var NetRetry = struct {
	Attempts     int           // total tries, first included
	PushAttempts int           // total tries of a push, first included
	Base         time.Duration // first wait, doubled each try
	MaxWait      time.Duration // the longest wait between two tries
}{Attempts: 4, PushAttempts: 8, Base: time.Second, MaxWait: 8 * time.Second}

// networked are the subcommands that reach the remote.
var networked = map[string]bool{"ls-remote": true, "fetch": true, "push": true}

// transientGit are what git (and curl under it) print when the remote or the way to it failed for a while.
var transientGit = []string{
	"the requested url returned error: 5", "the requested url returned error: 429",
	"rpc failed", "empty reply from server", "connection reset", "early eof", "unexpected disconnect",
	"the remote end hung up unexpectedly", "transfer closed", "http/2 stream", "recv failure",
	"operation timed out", "failed to connect", "could not read from remote repository", "unable to access",
	"bad line length character", "expected flush after ref listing", "protocol error",
}

// Transient says whether err is a git command that failed on the network or on a passing answer of the
// host (see NetRetry), rather than on what it was asked.
func Transient(err error) bool {
	var ce *CommandError
	if !errors.As(err, &ce) || errors.Is(ce.Err, context.Canceled) || errors.Is(ce.Err, context.DeadlineExceeded) {
		return false
	}
	s := strings.ToLower(ce.Stderr)
	if strings.Contains(s, "gh013:") {
		return false // a repository rule refused the push: the same push meets the same rule
	}
	if strings.Contains(s, "returned error: 4") && !strings.Contains(s, "returned error: 429") {
		return false // refused: authentication, permission, a repository that is not there
	}
	for _, t := range transientGit {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// retrying runs try, and runs it again while it fails transiently and a network command is what it runs.
func retrying(ctx context.Context, args []string, try func() ([]byte, error)) ([]byte, error) {
	if !networked[subcommand(args)] {
		return try()
	}
	wait, attempts := NetRetry.Base, NetRetry.Attempts
	if subcommand(args) == "push" {
		attempts = NetRetry.PushAttempts
	}
	for attempt := 1; ; attempt++ {
		out, err := try()
		if err == nil || attempt >= attempts || !Transient(err) || ctx.Err() != nil {
			return out, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, err
		case <-t.C:
		}
		wait = min(wait*2, NetRetry.MaxWait)
	}
}
