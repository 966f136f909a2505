package ghapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Retry bounds how ralph retries what GitHub says is retryable.
type Retry struct {
	Attempts int           // total tries, first included
	Base     time.Duration // first backoff; doubled each try, with jitter
	Max      time.Duration // longest single wait, Retry-After included; a longer wait is not waited for
	// Sleep waits d or until ctx ends; nil: a real timer. Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetry: four tries, waits from 1s, none longer than a minute.
var DefaultRetry = Retry{Attempts: 4, Base: time.Second, Max: time.Minute}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// createKey marks the context of a request that creates something GitHub gives no key of ours to.
type createKey struct{}

// repeatKey marks the context of a POST that is safe to send again when its outcome is unknown (a 5xx, a
// broken connection): the caller says why a second copy does no harm.
type repeatKey struct{}

// readQuery marks a GraphQL query (not a mutation) as safe to send again: it is a POST, but it reads.
func readQuery(ctx context.Context, query string) context.Context {
	if strings.HasPrefix(strings.TrimSpace(query), "mutation") {
		return ctx
	}
	return context.WithValue(ctx, repeatKey{}, true)
}

// retryTransport retries 5xx answers, secondary rate limits and network errors of idempotent requests.
// A POST or PATCH whose connection broke is not retried: GitHub may have applied it, and the caller's
// look-before-create logic is what makes repeating it safe.
type retryTransport struct {
	base  http.RoundTripper
	retry Retry
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 1; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		resp, err := t.base.RoundTrip(r)
		wait, retry := t.decide(req, resp, err, attempt)
		if !retry || attempt >= t.retry.Attempts {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if serr := t.retry.sleep(req.Context(), wait); serr != nil {
			if err == nil {
				err = fmt.Errorf("retrying after HTTP %d: %w", resp.StatusCode, serr)
			}
			return nil, err
		}
	}
}

func (t *retryTransport) decide(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	backoff := t.backoff(attempt)
	if err != nil {
		if req.Context().Err() != nil {
			return 0, false
		}
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
			return backoff, true
		}
		if req.Context().Value(repeatKey{}) != nil {
			return backoff, true
		}
		return 0, false
	}
	switch {
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		// GitHub may have applied a write it then answered 502 or 504 to: a create that leaves no key to
		// find it by (a comment, an issue) is not repeated here, or it would exist twice. The caller looks
		// for it and repeats it only if it is not there.
		if req.Context().Value(createKey{}) != nil {
			return 0, false
		}
		return backoff, true
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
		if resp.Header.Get("X-RateLimit-Remaining") == "0" && resp.Header.Get("Retry-After") == "" {
			// The primary limit: waiting is up to the caller (the error says when it resets), unless it
			// resets within the longest wait we allow.
			if d, ok := untilReset(resp.Header.Get("X-RateLimit-Reset")); ok && d <= t.retry.Max {
				return d, true
			}
			return 0, false
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			secs, perr := strconv.Atoi(strings.TrimSpace(ra))
			if perr != nil || secs < 0 {
				return backoff, true
			}
			d := time.Duration(secs) * time.Second
			return d, d <= t.retry.Max
		}
		if resp.StatusCode == http.StatusTooManyRequests || secondaryLimit(resp) {
			return backoff * 2, true
		}
	}
	return 0, false
}

func (t *retryTransport) backoff(attempt int) time.Duration {
	d := t.retry.Base << (attempt - 1)
	if d <= 0 || d > t.retry.Max {
		d = t.retry.Max
	}
	// Jitter of up to a quarter keeps parallel runs from retrying in step.
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

func untilReset(v string) (time.Duration, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, false
	}
	d := time.Until(time.Unix(secs, 0))
	if d < 0 {
		d = 0
	}
	return d + time.Second, true
}

// secondaryLimit peeks at a 403's message: GitHub says "secondary rate limit" without Retry-After at times.
func secondaryLimit(resp *http.Response) bool {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && strings.Contains(strings.ToLower(string(b)), "secondary rate limit")
}

// systemBundles are the CA bundle files of the systems ralph runs on (Debian and Alpine, Fedora, macOS and
// the BSDs): DefaultTransport and CABundle trust every one that exists.
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}

// DefaultTransport trusts the system CA bundle and, in addition, the certificates in SSL_CERT_FILE (Go on its
// own would use that file instead of the system bundle). getenv nil: os.Getenv.
func DefaultTransport(getenv func(string) string) (http.RoundTripper, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	pems, err := bundles(getenv)
	if err != nil {
		return nil, err
	}
	for _, pem := range pems {
		pool.AppendCertsFromPEM(pem)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}

// CABundle is what DefaultTransport trusts, as one PEM file's content, for ralph's git: git built with
// GnuTLS (Debian's) ignores SSL_CERT_FILE, so ralph gives it this bundle as GIT_SSL_CAINFO. nil when
// SSL_CERT_FILE is not set (git then trusts the system bundle, as DefaultTransport does) or when no system
// bundle file exists (a bundle of SSL_CERT_FILE alone would distrust every public host).
func CABundle(getenv func(string) string) ([]byte, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("SSL_CERT_FILE") == "" {
		return nil, nil
	}
	pems, err := bundles(getenv)
	if err != nil || len(pems) < 2 {
		return nil, err
	}
	var b bytes.Buffer
	for _, pem := range pems {
		b.Write(pem)
		if len(pem) > 0 && pem[len(pem)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// bundles reads the system bundle files that exist and then SSL_CERT_FILE, which must exist and hold a
// PEM certificate when it is set.
func bundles(getenv func(string) string) ([][]byte, error) {
	var pems [][]byte
	for _, f := range systemBundles {
		if pem, err := os.ReadFile(f); err == nil {
			pems = append(pems, pem)
		}
	}
	f := getenv("SSL_CERT_FILE")
	if f == "" {
		return pems, nil
	}
	pem, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("reading SSL_CERT_FILE: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("SSL_CERT_FILE %s holds no PEM certificate", f)
	}
	return append(pems, pem), nil
}
