package engine

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Transient says whether an error is GitHub failing for a while: a refusal and a cancelled run are not.
// (Whether a failure was recorded, which no run is dispatched to finish, is the Result's: TestHandleRecorded.)
func TestTransient(t *testing.T) {
	t.Parallel()
	lost := &url.Error{Op: "Patch", URL: "https://api.github.com/x", Err: io.EOF}
	gitFail := &git.CommandError{Args: []string{"push"}, Stderr: "error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502", Err: &exec.ExitError{}}
	step := &StepError{Step: "implement", Reason: "verify failed"}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"lost answer", fmt.Errorf("#1: updating the status comment: %w", lost), true},
		{"502", &ghapi.Error{Status: 502}, true},
		{"secondary rate limit", &ghapi.Error{Status: 403, Message: "You have exceeded a secondary rate limit"}, true},
		{"429", &ghapi.Error{Status: 429}, true},
		{"git 502", fmt.Errorf("push: %w", gitFail), true},
		{"failure recorded, its writing failed", fmt.Errorf("#1: %w", errors.Join(step, lost)), true},
		{"forbidden", &ghapi.Error{Status: 403, Message: "Resource not accessible by integration"}, false},
		{"not found", &ghapi.Error{Status: 404}, false},
		{"step failure", fmt.Errorf("#1: %w", step), false},
		{"input", &InputError{Msg: "no such issue"}, false},
		{"held", &HeldError{Holder: "Actions run 1"}, false},
	}
	for _, c := range cases {
		if got := Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestParseFinish reads Finishing's own message; what it cannot read counts as nothing.
func TestParseFinish(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		msg  string
		want finish
	}{
		{"ralph: finishing #7\n\nat: in-progress implement\nruns: 2\nsince: 2026-03-01T12:00:00Z\n", finish{at: "in-progress implement", runs: 2, since: since}},
		{"ralph: finishing #7\n\nat: in-review \nruns: 1\nsince: 2026-03-01T12:00:00Z\ncarry: {\"command\":\"fix\"}\nwritten: 2026-03-01T12:00:00Z\n",
			finish{at: "in-review ", runs: 1, since: since, carry: `{"command":"fix"}`, written: since}},
		{"not ours", finish{}},
		{"at: plan\nruns: many\nsince: yesterday\n", finish{at: "plan"}},
	}
	for _, tt := range tests {
		got := parseFinish(tt.msg)
		if got.at != tt.want.at || got.runs != tt.want.runs || !got.since.Equal(tt.want.since) || got.carry != tt.want.carry || !got.written.Equal(tt.want.written) {
			t.Errorf("parseFinish(%q) = %+v; want %+v", tt.msg, got, tt.want)
		}
	}
}
