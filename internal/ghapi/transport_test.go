package ghapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func certEnv(path string) func(string) string {
	return func(k string) string {
		if k == "SSL_CERT_FILE" {
			return path
		}
		return ""
	}
}

// TestEnterpriseTLS reaches an Enterprise-style server over HTTPS on a port, trusting its certificate through
// SSL_CERT_FILE. The server answers 401 without the token, so success means the token crossed: go-gh compares
// host names without ports.
func TestEnterpriseTLS(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true})
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("test server at %s, want https on 127.0.0.1 with a port", srv.URL)
	}
	tr, err := ghapi.DefaultTransport(certEnv(writeFile(t, "ca.pem", srv.CACertPEM())))
	if err != nil {
		t.Fatalf("DefaultTransport: %v", err)
	}
	endpoints := ghapi.EndpointsFromEnv(func(k string) string {
		if k == "GITHUB_API_URL" {
			return srv.URL
		}
		return ""
	})
	if diff := cmp.Diff(ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL}, endpoints); diff != "" {
		t.Errorf("endpoints from GITHUB_API_URL=%s (-want +got):\n%s", srv.URL, diff)
	}
	c, err := ghapi.New(ghapi.Options{Endpoints: endpoints, Token: "test-token", Owner: "octo", Repo: "demo", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := c.Repository(ctx)
	if err != nil {
		t.Fatalf("Repository over TLS: %v", err)
	}
	if want := srv.ServerURL + "/octo/demo"; repo.HTMLURL != want {
		t.Errorf("html_url = %q, want %q", repo.HTMLURL, want)
	}
	n := srv.CreateIssue("alice", "t", "")
	if _, err := c.CreateComment(ctx, n, "over TLS"); err != nil {
		t.Fatalf("CreateComment over TLS: %v", err)
	}
	want := []githubtest.Request{
		{Method: "GET", Path: "/repos/octo/demo", Status: 200},
		{Method: "POST", Path: fmt.Sprintf("/repos/octo/demo/issues/%d/comments", n), Status: 201},
	}
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestEnterpriseTLSUntrusted(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true})
	tr, err := ghapi.DefaultTransport(func(string) string { return "" })
	if err != nil {
		t.Fatalf("DefaultTransport: %v", err)
	}
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: tr,
		Retry: ghapi.Retry{Attempts: 2, Max: time.Minute, Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Repository(context.Background())
	var cve *tls.CertificateVerificationError
	if !errors.As(err, &cve) {
		t.Errorf("Repository with an untrusted certificate: error = %v, want a certificate verification error", err)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("the server answered %v; the handshake should have failed", got)
	}
}

func TestDefaultTransportCertFile(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{TLS: true})
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{"unset", "", ""},
		{"the server's certificate", writeFile(t, "ca.pem", srv.CACertPEM()), ""},
		{"missing file", filepath.Join(t.TempDir(), "nope.pem"), "SSL_CERT_FILE"},
		{"not PEM", writeFile(t, "junk.pem", []byte("this is not a certificate\n")), "no PEM certificate"},
		{"empty", writeFile(t, "empty.pem", nil), "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := ghapi.DefaultTransport(certEnv(tt.path))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DefaultTransport(SSL_CERT_FILE=%s) = %v, %v; want an error containing %q", tt.path, tr, err, tt.wantErr)
				}
				return
			}
			if err != nil || tr == nil {
				t.Errorf("DefaultTransport(SSL_CERT_FILE=%s) = %v, %v; want a transport", tt.path, tr, err)
			}
		})
	}
}

// fault answers the n-th request (from 1) that reaches the server, or returns false to let the server answer.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

func status(code int, header map[string]string, message string) fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`+"\n", message)
		return true
	}
}

// first applies f to the first k requests only.
func first(k int, f fault) fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		return n <= k && f(w, r, n)
	}
}

// broken drops the connection without an answer.
func broken(w http.ResponseWriter, r *http.Request, n int) bool {
	panic(http.ErrAbortHandler)
}

type span struct{ lo, hi time.Duration }

func TestRetry(t *testing.T) {
	t.Parallel()
	const base = 100 * time.Millisecond
	// backoff is the n-th wait (from 1) before jitter, which takes off up to a quarter.
	backoff := func(n int) span { d := base << (n - 1); return span{d - d/4, d} }
	later := time.Now().Add(time.Hour).Unix()

	getRepo := func(ctx context.Context, c *ghapi.Client) error { _, err := c.Repository(ctx); return err }
	postComment := func(ctx context.Context, c *ghapi.Client) error {
		_, err := c.CreateComment(ctx, 1, "hello")
		return err
	}
	postLabel := func(ctx context.Context, c *ghapi.Client) error {
		return c.CreateLabel(ctx, ghapi.Label{Name: "retried", Color: "ededed"})
	}
	isStatus := func(code int) func(t *testing.T, err error) {
		return func(t *testing.T, err error) {
			t.Helper()
			var ge *ghapi.Error
			if !errors.As(err, &ge) || ge.Status != code {
				t.Errorf("error = %v, want *ghapi.Error with status %d", err, code)
			}
		}
	}
	ok := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("error = %v, want success", err)
		}
	}

	tests := []struct {
		name      string
		call      func(context.Context, *ghapi.Client) error
		fault     fault
		max       time.Duration // Retry.Max; default a minute
		wantHits  int           // requests that reached the server
		wantWaits []span
		check     func(t *testing.T, err error)
	}{
		{"502 twice then success", getRepo, first(2, status(502, nil, "Server Error")), 0, 3,
			[]span{backoff(1), backoff(2)}, ok},
		{"POST 502 twice then success", postLabel, first(2, status(502, nil, "Server Error")), 0, 3,
			[]span{backoff(1), backoff(2)}, ok},
		// GitHub may have posted a comment it answered 502 to: the client leaves the repeat to its caller,
		// which can look for it first.
		{"a comment POST is not repeated after a 502", postComment, first(1, status(502, nil, "Server Error")), 0, 1,
			nil, isStatus(502)},
		{"502 forever", getRepo, status(502, nil, "Server Error"), 0, 3,
			[]span{backoff(1), backoff(2)}, isStatus(502)},
		{"503 then success", getRepo, first(1, status(503, nil, "Unavailable")), 0, 2, []span{backoff(1)}, ok},
		{"501 is not retried", getRepo, status(501, nil, "Not Implemented"), 0, 1, nil, isStatus(501)},
		{"secondary rate limit with Retry-After", getRepo,
			first(1, status(403, map[string]string{"Retry-After": "1"}, "You have exceeded a secondary rate limit.")), 0, 2,
			[]span{{time.Second, time.Second}}, ok},
		{"secondary rate limit without Retry-After", getRepo,
			first(1, status(403, nil, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")), 0, 2,
			[]span{{2 * backoff(1).lo, 2 * backoff(1).hi}}, ok},
		{"429", getRepo, first(1, status(429, nil, "Too Many Requests")), 0, 2,
			[]span{{2 * backoff(1).lo, 2 * backoff(1).hi}}, ok},
		{"429 with Retry-After", getRepo, first(1, status(429, map[string]string{"Retry-After": "3"}, "Too Many Requests")), 0, 2,
			[]span{{3 * time.Second, 3 * time.Second}}, ok},
		{"Retry-After longer than Max", getRepo,
			status(403, map[string]string{"Retry-After": "120"}, "You have exceeded a secondary rate limit."), 0, 1, nil, isStatus(403)},
		{"Retry-After just within Max", getRepo,
			first(1, status(403, map[string]string{"Retry-After": "2"}, "You have exceeded a secondary rate limit.")), 2 * time.Second, 2,
			[]span{{2 * time.Second, 2 * time.Second}}, ok},
		{"a plain 403 is not retried", getRepo, status(403, nil, "Resource not accessible by integration"), 0, 1, nil, isStatus(403)},
		{"primary rate limit", getRepo,
			status(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": fmt.Sprint(later)}, "API rate limit exceeded for installation ID 1."),
			0, 1, nil, func(t *testing.T, err error) {
				t.Helper()
				isStatus(403)(t, err)
				reset := time.Unix(later, 0).UTC().Format(time.RFC3339)
				if err == nil || !strings.Contains(err.Error(), "rate limit") || !strings.Contains(err.Error(), reset) {
					t.Errorf("error = %v, want it to say rate limit and %s", err, reset)
				}
			}},
		{"primary rate limit resetting within Max", getRepo,
			first(1, func(w http.ResponseWriter, r *http.Request, n int) bool {
				soon := time.Now().Add(5 * time.Second).Unix() // read when answering: set-up takes a while
				return status(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": fmt.Sprint(soon)}, "API rate limit exceeded")(w, r, n)
			}),
			0, 2, []span{{3 * time.Second, 7 * time.Second}}, ok},
		{"404", getRepo, status(404, nil, "Not Found"), 0, 1, nil, func(t *testing.T, err error) {
			t.Helper()
			if !errors.Is(err, ghapi.ErrNotFound) {
				t.Errorf("error = %v, want ErrNotFound", err)
			}
		}},
		{"422", postComment, status(422, nil, "Validation Failed"), 0, 1, nil, isStatus(422)},
		{"GET with a broken connection", getRepo, first(1, broken), 0, 2, []span{backoff(1)}, ok},
		{"POST with a broken connection", postComment, broken, 0, 1, nil, func(t *testing.T, err error) {
			t.Helper()
			var ge *ghapi.Error
			if err == nil || errors.As(err, &ge) {
				t.Errorf("error = %v, want a network error", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			n := srv.CreateIssue("alice", "t", "")
			if n != 1 {
				t.Fatalf("issue number %d, want 1", n)
			}
			var (
				mu     sync.Mutex
				hits   int
				bodies []string
			)
			srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("reading the request body: %v", err)
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				mu.Lock()
				hits++
				k := hits
				bodies = append(bodies, string(b))
				mu.Unlock()
				return tt.fault(w, r, k)
			})
			max := tt.max
			if max == 0 {
				max = time.Minute
			}
			var waits []time.Duration
			c, err := ghapi.New(ghapi.Options{
				Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
				Token:     "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport,
				Retry: ghapi.Retry{Attempts: 3, Base: base, Max: max, Sleep: func(ctx context.Context, d time.Duration) error {
					waits = append(waits, d)
					return nil
				}},
			})
			if err != nil {
				t.Fatal(err)
			}

			err = tt.call(context.Background(), c)
			tt.check(t, err)

			mu.Lock()
			defer mu.Unlock()
			if hits != tt.wantHits {
				t.Errorf("%d requests reached the server, want %d", hits, tt.wantHits)
			}
			if len(waits) != len(tt.wantWaits) {
				t.Errorf("waits %v, want %d in %v", waits, len(tt.wantWaits), tt.wantWaits)
			} else {
				for i, w := range waits {
					if w < tt.wantWaits[i].lo || w > tt.wantWaits[i].hi {
						t.Errorf("wait %d = %v, want within %v", i+1, w, tt.wantWaits[i])
					}
				}
			}
			// Every try of a request carries the same body.
			for i, b := range bodies {
				if b != bodies[0] {
					t.Errorf("try %d sent body %q, the first sent %q", i+1, b, bodies[0])
				}
			}
			if len(bodies) > 0 && bodies[0] != "" && bodies[0] != `{"body":"hello"}` && bodies[0] != `{"name":"retried","color":"ededed"}` {
				t.Errorf("body %q, want the comment's or the label's", bodies[0])
			}
		})
	}
}

// TestRetryBodyReachesServer checks a write retried after 502s (a comment's edit) is applied once, with
// its body sent whole on every try.
func TestRetryBodyReachesServer(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	n := srv.CreateIssue("alice", "t", "")
	cm := srv.AddComment(n, "alice", "draft")
	c := newClient(t, srv)
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		bodies = append(bodies, string(b))
		k := len(bodies)
		mu.Unlock()
		return first(2, status(502, nil, "Server Error"))(w, r, k)
	})
	if _, err := c.UpdateComment(context.Background(), cm.ID, "once, with feeling"); err != nil {
		t.Fatalf("UpdateComment: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := `{"body":"once, with feeling"}`
	if diff := cmp.Diff([]string{want, want, want}, bodies); diff != "" {
		t.Errorf("bodies of the three tries (-want +got):\n%s", diff)
	}
	if got := srv.Comments(n); len(got) != 1 || got[0].Body != "once, with feeling" {
		t.Errorf("comments on the server: %+v", got)
	}
}

// TestCreatesNotRepeatedAfter5xx: a comment or an issue GitHub answered 502 to may exist all the same, so
// the client does not send it again (its caller looks first).
func TestCreatesNotRepeatedAfter5xx(t *testing.T) {
	t.Parallel()
	for name, create := range map[string]func(c *ghapi.Client) error{
		"comment": func(c *ghapi.Client) error { _, err := c.CreateComment(context.Background(), 1, "x"); return err },
		"issue": func(c *ghapi.Client) error {
			_, err := c.CreateIssue(context.Background(), ghapi.NewIssue{Title: "x"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			srv.CreateIssue("alice", "t", "")
			hits := 0
			srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost {
					return false
				}
				hits++
				return status(502, nil, "Server Error")(w, r, hits)
			})
			if err := create(newClient(t, srv)); err == nil {
				t.Fatal("no error after a 502")
			}
			if hits != 1 {
				t.Errorf("%d POSTs reached the server, want 1", hits)
			}
		})
	}
}

// TestDispatchRepeated: a dispatch whose outcome is unknown — a 502, or an answer lost with its
// connection — is sent again, since a lost dispatch ends the chain of step runs and a second run is harmless.
func TestDispatchRepeated(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(srv *githubtest.Server) func() int{
		"502": func(srv *githubtest.Server) func() int {
			hits := 0
			srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost {
					return false
				}
				hits++
				return first(1, status(502, nil, "Server Error"))(w, r, hits)
			})
			return func() int { return min(hits, 1) }
		},
		"lost answer": func(srv *githubtest.Server) func() int {
			lost := 0
			srv.LoseResponse(func(method, path string, status int) bool {
				if method != http.MethodPost || lost > 0 {
					return false
				}
				lost++
				return true
			})
			return func() int { return lost }
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			injected := fault(srv)
			run, err := newClient(t, srv).DispatchWorkflow(context.Background(), "ralph.yml", "main", map[string]string{"issue": "1"})
			if err != nil {
				t.Fatalf("DispatchWorkflow: %v", err)
			}
			if injected() != 1 {
				t.Fatalf("%d faults injected, want 1", injected())
			}
			if run.ID == 0 || run.HTMLURL == "" {
				t.Errorf("dispatched run = %+v, want its id and address", run)
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	var (
		mu   sync.Mutex
		hits int
	)
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		hits++
		mu.Unlock()
		return status(502, nil, "Server Error")(w, r, 0)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sleeps := 0
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport,
		Retry: ghapi.Retry{Attempts: 5, Base: time.Second, Max: time.Minute, Sleep: func(ctx context.Context, d time.Duration) error {
			sleeps++
			cancel() // the run is cancelled while it waits
			return ctx.Err()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Repository(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 || sleeps != 1 {
		t.Errorf("%d requests and %d waits, want 1 and 1", hits, sleeps)
	}
}

// TestRetryRealTimer checks the default sleep (a real timer) ends early with the context.
func TestRetryRealTimer(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		return status(502, nil, "Server Error")(w, r, 0)
	})
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport,
		Retry: ghapi.Retry{Attempts: 3, Base: time.Hour, Max: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Repository(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v; the wait should end with the context", d)
	}
}

// CABundle is what DefaultTransport trusts, for git: the system bundle and SSL_CERT_FILE's certificates.
func TestCABundle(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{TLS: true})
	system, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Skip("no system CA bundle at /etc/ssl/certs/ca-certificates.crt (Debian's): the bundle is nil without one")
	}
	ca := writeFile(t, "ca.pem", srv.CACertPEM())
	got, err := ghapi.CABundle(certEnv(ca))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, srv.CACertPEM()) || !bytes.Contains(got, system) {
		t.Errorf("CABundle(SSL_CERT_FILE=%s) holds %d bytes, not the system bundle (%d bytes) and the server's certificate", ca, len(got), len(system))
	}
	if got, err := ghapi.CABundle(certEnv("")); got != nil || err != nil {
		t.Errorf("CABundle without SSL_CERT_FILE = %d bytes, %v; want nil, nil (git trusts the system bundle itself)", len(got), err)
	}
	if _, err := ghapi.CABundle(certEnv(filepath.Join(t.TempDir(), "nope.pem"))); err == nil {
		t.Error("CABundle with a missing SSL_CERT_FILE: no error")
	}
}
