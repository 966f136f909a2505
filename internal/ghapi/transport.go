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
	"sync"
	"time"
)

// Retry bounds how ralph retries what GitHub says is retryable.
type Retry struct {
	Attempts int           // tries of an answer that failed (a 5xx, a broken connection), first included
	Base     time.Duration // first backoff; doubled each try, with jitter
	Max      time.Duration // longest backoff of a failed answer
	// Limits is how long one request waits in all for GitHub's rate limits (Retry-After, the primary
	// limit's reset), however many times GitHub refuses it: within it ralph waits as long as GitHub asks.
	// 0: Max.
	Limits time.Duration
	// Sleep waits d or until ctx ends; nil: a real timer. Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
}

// LimitWait is how long a request of ralph's waits for GitHub's rate limits: the primary limit's window is
// an hour, so GitHub never asks for longer, and a job's timeout (the workflows' 160 minutes) holds a step
// (agent.timeout, 30 minutes) and such a wait. The dispatch that carries an issue to its next step is not
// lost to a limit that lasts: it is sent once the window ends.
const LimitWait = time.Hour + time.Minute

// DefaultRetry: four tries of a failed answer, backoffs from 1s up to a minute, and waits for rate limits
// as long as GitHub asks within LimitWait.
var DefaultRetry = Retry{Attempts: 4, Base: time.Second, Max: time.Minute, Limits: LimitWait}

// maxRefusals bounds the refusals of one request that ralph waits out, whatever their waits.
const maxRefusals = 64

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
	gate  gate
}

// gate holds every request of a client back while GitHub's rate limit refuses them: a refusal's window
// (Retry-After, or the primary limit's reset) is the client's, not one request's, so no request of a run
// goes out inside it.
type gate struct {
	mu    sync.Mutex
	until time.Time
}

// close keeps requests back until t.
func (g *gate) close(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.until) {
		g.until = t
	}
}

// closed is until when requests are held back.
func (g *gate) closed() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

// LimitError is a request ralph did not send, or stopped retrying, because GitHub's rate limit refuses
// requests until Until, later than ralph waits (Retry.Limits).
type LimitError struct {
	Until time.Time
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("GitHub's rate limit refuses requests until %s, longer than ralph waits", e.Until.UTC().Format(time.RFC3339))
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
	limits := t.retry.Limits
	if limits <= 0 {
		limits = t.retry.Max
	}
	var waited time.Duration // for rate limits, this request's
	var slept time.Time      // the end of the last window this request waited out
	refusals, attempt := 0, 0
	for {
		if until := t.gate.closed(); until.After(slept) {
			if d := time.Until(until); d > 0 {
				if waited+d > limits {
					return nil, &LimitError{Until: until}
				}
				waited += d
				if err := t.retry.sleep(req.Context(), d); err != nil {
					return nil, err
				}
			}
			slept = until
		}
		attempt++
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		resp, err := t.base.RoundTrip(r)
		if d, limited := t.limited(resp, err, attempt); limited {
			// GitHub refuses for a while and says how long (or is asked to, by a backoff): the client
			// waits, every request of it, and this one goes again, as long as GitHub asks within limits.
			until := time.Now().Add(d)
			t.gate.close(until)
			refusals++
			if waited+d > limits || refusals >= maxRefusals {
				return resp, err
			}
			attempt-- // a refusal is no failed answer: it spends no try
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			waited += d
			if serr := t.retry.sleep(req.Context(), d); serr != nil {
				return nil, fmt.Errorf("waiting for GitHub's rate limit: %w", serr)
			}
			slept = until
			continue
		}
		if err == nil && resp.Header.Get("X-RateLimit-Remaining") == "0" {
			// The primary limit is spent: every request until its reset would be refused.
			if d, ok := untilReset(resp.Header.Get("X-RateLimit-Reset")); ok {
				t.gate.close(time.Now().Add(d))
			}
		}
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
	}
	return 0, false
}

// limited says whether resp is GitHub's rate limit refusing the request (403 or 429), and how long to wait:
// what Retry-After says, or until the primary limit resets, or else a backoff.
func (t *retryTransport) limited(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil || resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		secs, perr := strconv.Atoi(strings.TrimSpace(ra))
		if perr != nil || secs < 0 {
			return t.backoff(attempt), true
		}
		return max(time.Duration(secs)*time.Second, t.retry.Base), true
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		d, ok := untilReset(resp.Header.Get("X-RateLimit-Reset"))
		return d, ok
	}
	if resp.StatusCode == http.StatusTooManyRequests || secondaryLimit(resp) {
		return t.backoff(attempt) * 2, true
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
