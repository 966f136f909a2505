package ghapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// Transient says whether err is GitHub's API failing for a while rather than refusing what was asked: a
// 5xx answer (501 excepted: not implemented is an answer), a rate limit (429, or a 403 that says it is
// one), a connection that broke or an answer that never came, after the client's own retries. The
// caller's context ending is not transient: whoever ended it decides.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ge *Error
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
