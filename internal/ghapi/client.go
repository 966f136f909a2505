// Package ghapi is ralph's GitHub client: REST through go-gh for issues, labels, comments, pull requests,
// refs, permissions, workflow dispatches and Actions runs, with bounded retries of what GitHub says is retryable.
package ghapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
)

// ErrNotFound is returned (wrapped) for a 404 from GitHub.
var ErrNotFound = errors.New("not found")

// Endpoints are the three URLs a GitHub host is reached at.
type Endpoints struct {
	API     string // REST base, e.g. https://api.github.com or https://ghe.example.com:8443/api/v3
	GraphQL string // e.g. https://api.github.com/graphql
	Server  string // web URL, for links: https://github.com
}

// EndpointsFromEnv reads GITHUB_API_URL, GITHUB_GRAPHQL_URL and GITHUB_SERVER_URL as GitHub Actions sets them,
// filling what is missing from the others (github.com when nothing is set).
func EndpointsFromEnv(getenv func(string) string) Endpoints {
	e := Endpoints{
		API:     strings.TrimRight(getenv("GITHUB_API_URL"), "/"),
		GraphQL: strings.TrimRight(getenv("GITHUB_GRAPHQL_URL"), "/"),
		Server:  strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/"),
	}
	return e.complete()
}

// ForHost gives the endpoints of a GitHub host name as gh knows it ("github.com", "ghe.example.com:8443").
func ForHost(host string) Endpoints {
	if host == "" || strings.EqualFold(host, "github.com") {
		return Endpoints{Server: "https://github.com"}.complete()
	}
	return Endpoints{Server: "https://" + host}.complete()
}

func (e Endpoints) complete() Endpoints {
	switch {
	case e.Server == "" && e.API == "":
		e.Server, e.API = "https://github.com", "https://api.github.com"
	case e.Server == "":
		if strings.TrimRight(e.API, "/") == "https://api.github.com" {
			e.Server = "https://github.com"
		} else if isTenancy(e.API) {
			e.Server = strings.Replace(e.API, "://api.", "://", 1)
		} else {
			e.Server = strings.TrimSuffix(e.API, "/api/v3")
		}
	case e.API == "":
		if e.Server == "https://github.com" {
			e.API = "https://api.github.com"
		} else if isTenancy(e.Server) {
			// GHE.com (data residency) serves its API at api.<subdomain>.ghe.com, as github.com does.
			e.API = strings.Replace(e.Server, "://", "://api.", 1)
		} else {
			e.API = e.Server + "/api/v3"
		}
	}
	if e.GraphQL == "" {
		if strings.HasSuffix(e.API, "/api/v3") {
			e.GraphQL = strings.TrimSuffix(e.API, "/v3") + "/graphql"
		} else {
			e.GraphQL = e.API + "/graphql"
		}
	}
	return e
}

// isTenancy says whether u is on a GHE.com (data residency) host, whose API is at api.<host>.
func isTenancy(u string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.HasSuffix(strings.ToLower(p.Hostname()), ".ghe.com")
}

// Options configure a Client.
type Options struct {
	Endpoints Endpoints
	Token     string
	Owner     string
	Repo      string
	// Transport is the base transport (tests; TLS settings). Default: one that trusts the system CA bundle
	// and SSL_CERT_FILE.
	Transport http.RoundTripper
	// Retry bounds retries of retryable answers; zero value: DefaultRetry.
	Retry Retry
}

// Client talks to one repository on one GitHub host.
type Client struct {
	rest      *api.RESTClient
	endpoints Endpoints
	owner     string
	repo      string
	// transport and token serve the requests go-gh's client cannot make: one whose redirect must not be
	// followed with the token (a job's log, see logs.go).
	transport http.RoundTripper
	token     string
}

// New makes a Client. The token is sent only to the API host (its name without a port, which is how go-gh
// compares hosts: an Enterprise server on a port would otherwise lose its token).
func New(opts Options) (*Client, error) {
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("ghapi: owner and repository are required")
	}
	u, err := url.Parse(opts.Endpoints.API)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ghapi: invalid API URL %q", opts.Endpoints.API)
	}
	base := opts.Transport
	if base == nil {
		base, err = DefaultTransport(nil)
		if err != nil {
			return nil, err
		}
	}
	retry := opts.Retry
	if retry.Attempts == 0 {
		retry = DefaultRetry
	}
	transport := &retryTransport{base: base, retry: retry}
	rest, err := api.NewRESTClient(api.ClientOptions{
		Host:         u.Hostname(),
		APIHost:      u.Hostname(),
		AuthToken:    opts.Token,
		Transport:    transport,
		LogIgnoreEnv: true,
		Headers:      map[string]string{"Accept": "application/vnd.github+json"},
	})
	if err != nil {
		return nil, fmt.Errorf("ghapi: %w", err)
	}
	return &Client{rest: rest, endpoints: opts.Endpoints, owner: opts.Owner, repo: opts.Repo, transport: transport, token: opts.Token}, nil
}

// Owner and Repo name the repository the client works on.
func (c *Client) Owner() string { return c.owner }

// Repo is the repository's name.
func (c *Client) Repo() string { return c.repo }

// Endpoints returns the URLs the client uses.
func (c *Client) Endpoints() Endpoints { return c.endpoints }

// repoPath builds an absolute URL under /repos/{owner}/{repo}/, escaping each element.
func (c *Client) repoPath(elems ...string) string {
	parts := []string{"repos", url.PathEscape(c.owner), url.PathEscape(c.repo)}
	for _, e := range elems {
		parts = append(parts, url.PathEscape(e))
	}
	return c.endpoints.API + "/" + strings.Join(parts, "/")
}

// do sends one request and decodes a JSON answer into out (when out is not nil). It returns the response
// headers for pagination.
func (c *Client) do(ctx context.Context, method, u string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, c.short(u), err)
		}
		body = bytes.NewReader(b)
	}
	resp, err := c.rest.RequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, c.wrap(method, u, err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("%s %s: decoding answer: %w", method, c.short(u), err)
		}
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.Header, nil
}

// list follows Link rel="next" pages and appends every page's items to out.
func list[T any](ctx context.Context, c *Client, u string) ([]T, error) {
	var all []T
	for u != "" {
		var page []T
		h, err := c.do(ctx, http.MethodGet, u, nil, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		u = nextLink(h.Get("Link"))
	}
	return all, nil
}

func nextLink(link string) string {
	for _, part := range strings.Split(link, ",") {
		segs := strings.Split(part, ";")
		if len(segs) < 2 {
			continue
		}
		for _, s := range segs[1:] {
			if strings.TrimSpace(s) == `rel="next"` {
				return strings.Trim(strings.TrimSpace(segs[0]), "<>")
			}
		}
	}
	return ""
}

func (c *Client) short(u string) string {
	return strings.TrimPrefix(u, c.endpoints.API)
}

// Error is an answer from GitHub that is not a success.
type Error struct {
	Method  string
	Path    string
	Status  int
	Message string
	Details []string
	// Hint is what to do, for an answer that a repository setting or a missing permission explains.
	Hint string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if len(e.Details) > 0 {
		msg += " (" + strings.Join(e.Details, "; ") + ")"
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

func (c *Client) wrap(method, u string, err error) error {
	var he *api.HTTPError
	if errors.As(err, &he) {
		e := &Error{Method: method, Path: c.short(u), Status: he.StatusCode, Message: he.Message}
		for _, item := range he.Errors {
			d := item.Message
			if d == "" {
				d = strings.TrimSpace(item.Resource + " " + item.Field + " " + item.Code)
			}
			e.Details = append(e.Details, d)
		}
		if rl := primaryRateLimit(he.StatusCode, he.Headers); rl != "" {
			e.Message = rl
		}
		e.Hint = hint(he.StatusCode, he.Message)
		return e
	}
	return fmt.Errorf("%s %s: %w", method, c.short(u), err)
}

// primaryRateLimit explains a spent primary rate limit, with the time it resets.
func primaryRateLimit(status int, h http.Header) string {
	if (status != http.StatusForbidden && status != http.StatusTooManyRequests) || h.Get("X-RateLimit-Remaining") != "0" {
		return ""
	}
	reset := h.Get("X-RateLimit-Reset")
	var secs int64
	if _, err := fmt.Sscan(reset, &secs); err != nil || secs == 0 {
		return "API rate limit exceeded"
	}
	return fmt.Sprintf("API rate limit exceeded; it resets at %s", time.Unix(secs, 0).UTC().Format(time.RFC3339))
}
