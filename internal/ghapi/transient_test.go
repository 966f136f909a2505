package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
)

// Transient tells GitHub failing for a while (a 5xx, a rate limit, a lost answer) from GitHub refusing.
func TestTransient(t *testing.T) {
	t.Parallel()
	lost := &url.Error{Op: "Patch", URL: "https://api.github.com/x", Err: io.EOF}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"lost answer", fmt.Errorf("updating the status comment: %w", lost), true},
		{"502", &Error{Status: 502}, true},
		{"secondary rate limit", &Error{Status: 403, Message: "You have exceeded a secondary rate limit"}, true},
		{"429", &Error{Status: 429}, true},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{"501", &Error{Status: 501}, false},
		{"forbidden", &Error{Status: 403, Message: "Resource not accessible by integration"}, false},
		{"not found", &Error{Status: 404}, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"other", errors.New("no such issue"), false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		if got := Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
