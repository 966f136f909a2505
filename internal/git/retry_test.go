package git

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// Transient tells a remote that failed for a while (which ralph retries, and then hands to a run that
// finishes the step) from one that refused (which no retry changes).
func TestTransient(t *testing.T) {
	t.Parallel()
	exit := &exec.ExitError{}
	cases := []struct {
		stderr string
		want   bool
	}{
		{"error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502\nfatal: the remote end hung up unexpectedly", true},
		{"fatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 429", true},
		{"fatal: unable to access 'http://127.0.0.1:1/o/r.git/': Empty reply from server", true},
		{"fatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 403", false},
		{"remote: Invalid username or token.\nfatal: Authentication failed for 'https://github.com/o/r.git/'", false},
		{"! [rejected] sha -> refs/heads/b (stale info)\nerror: failed to push some refs", false},
		{"fatal: couldn't find remote ref refs/heads/nope", false},
		// A rule refused the push (GitHub may close the connection after its answer): the same push meets
		// the same rule.
		{"remote: error: GH013: Repository rule violations found for refs/heads/ralph/1-x.\nremote: - Commits must have verified signatures.\n ! [remote rejected] ralph/1-x -> ralph/1-x (push declined due to repository rule violations)\nfatal: the remote end hung up unexpectedly", false},
	}
	for _, c := range cases {
		err := fmt.Errorf("push: %w", &CommandError{Args: []string{"push"}, Stderr: c.stderr, Err: exit})
		if got := Transient(err); got != c.want {
			t.Errorf("Transient(%q) = %v, want %v", c.stderr, got, c.want)
		}
	}
	if Transient(errors.New("RPC failed")) {
		t.Error("an error that is not git's is transient")
	}
}

// A push is tried more often than a read before it is given up: in the Action the commit it carries (the
// agent's work) cannot be kept for the next run. Not parallel: it sets NetRetry's waits, which the
// package's parallel tests read only after it.
func TestRetryingPushTriesLonger(t *testing.T) {
	saved := NetRetry
	t.Cleanup(func() { NetRetry = saved })
	NetRetry.Base, NetRetry.MaxWait = time.Millisecond, 2*time.Millisecond
	failing := func(n int, tries *int) func() ([]byte, error) {
		return func() ([]byte, error) {
			if *tries++; *tries <= n {
				return nil, &CommandError{Args: []string{"x"}, Stderr: "fatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 502", Err: errors.New("exit status 128")}
			}
			return []byte("ok"), nil
		}
	}
	for _, tt := range []struct {
		args      []string
		failures  int
		wantTries int
		wantErr   bool
	}{
		{[]string{"push", "origin", "x:y"}, 6, 7, false},
		{[]string{"-c", "k=v", "push", "origin", "x:y"}, 8, 8, true},
		{[]string{"fetch", "origin"}, 6, 4, true},
		{[]string{"fetch", "origin"}, 3, 4, false},
	} {
		tries := 0
		_, err := retrying(context.Background(), tt.args, failing(tt.failures, &tries))
		if tries != tt.wantTries || (err != nil) != tt.wantErr {
			t.Errorf("%v failing %d times: %d tries, error %v; want %d tries, error %v", tt.args, tt.failures, tries, err, tt.wantTries, tt.wantErr)
		}
	}
}
