package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Transient says whether err is GitHub (its API or its git host) failing for a while rather than refusing
// what ralph asked: a 5xx answer, a rate limit, a connection that broke or an answer that never came, after
// the client's own retries. A run that ends on one has left the issue where a run that starts afresh picks
// it up (every write is found again by its marker, its branch or the record, and the agent's work by its
// commit), so the Action dispatches a run to finish the step instead of leaving the issue to a sweep.
// The run's context ending is not transient: whoever ended it decides.
//
// A step's failure that ralph recorded (a *StepError on its own, not joined with the error of writing it)
// is not transient: the record says what comes next, a retry or a person.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || recorded(err) {
		return false
	}
	if git.Transient(err) {
		return true
	}
	var ge *ghapi.Error
	if errors.As(err, &ge) {
		switch {
		case ge.Status >= 500 && ge.Status != http.StatusNotImplemented, ge.Status == http.StatusTooManyRequests:
			return true
		case ge.Status == http.StatusForbidden:
			m := strings.ToLower(ge.Message)
			return strings.Contains(m, "rate limit") // secondary, or a primary limit that resets later
		}
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// recorded says whether err is, under plain wrapping, a *StepError: fail wrote it down. A StepError joined
// with another error is one whose writing failed.
func recorded(err error) bool {
	for err != nil {
		if _, ok := err.(*StepError); ok {
			return true
		}
		if _, ok := err.(interface{ Unwrap() []error }); ok {
			return false
		}
		err = errors.Unwrap(err)
	}
	return false
}
