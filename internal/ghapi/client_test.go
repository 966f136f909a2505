package ghapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func TestEndpointsFromEnv(t *testing.T) {
	t.Parallel()
	dotcom := ghapi.Endpoints{API: "https://api.github.com", GraphQL: "https://api.github.com/graphql", Server: "https://github.com"}
	ghes := ghapi.Endpoints{API: "https://ghe.example.com:8443/api/v3", GraphQL: "https://ghe.example.com:8443/api/graphql", Server: "https://ghe.example.com:8443"}
	tenancy := ghapi.Endpoints{API: "https://api.octo.ghe.com", GraphQL: "https://api.octo.ghe.com/graphql", Server: "https://octo.ghe.com"}
	tests := []struct {
		name string
		env  map[string]string
		want ghapi.Endpoints
	}{
		{"nothing set", nil, dotcom},
		{"github.com as Actions sets it", map[string]string{
			"GITHUB_API_URL": "https://api.github.com", "GITHUB_GRAPHQL_URL": "https://api.github.com/graphql", "GITHUB_SERVER_URL": "https://github.com",
		}, dotcom},
		{"only the github.com API", map[string]string{"GITHUB_API_URL": "https://api.github.com/"}, dotcom},
		{"only the github.com server", map[string]string{"GITHUB_SERVER_URL": "https://github.com/"}, dotcom},
		{"only the Enterprise API", map[string]string{"GITHUB_API_URL": "https://ghe.example.com:8443/api/v3"}, ghes},
		{"only the Enterprise server", map[string]string{"GITHUB_SERVER_URL": "https://ghe.example.com:8443"}, ghes},
		{"Enterprise with trailing slashes", map[string]string{
			"GITHUB_API_URL": "https://ghe.example.com:8443/api/v3/", "GITHUB_SERVER_URL": "https://ghe.example.com:8443/",
		}, ghes},
		{"all three kept as set", map[string]string{
			"GITHUB_API_URL": "https://api.example.net/rest", "GITHUB_GRAPHQL_URL": "https://gql.example.net/q", "GITHUB_SERVER_URL": "https://web.example.net",
		}, ghapi.Endpoints{API: "https://api.example.net/rest", GraphQL: "https://gql.example.net/q", Server: "https://web.example.net"}},
		{"all three with trailing slashes", map[string]string{
			"GITHUB_API_URL": "https://ghe.example.com:8443/api/v3/", "GITHUB_GRAPHQL_URL": "https://ghe.example.com:8443/api/graphql/", "GITHUB_SERVER_URL": "https://ghe.example.com:8443/",
		}, ghes},
		{"GraphQL given, the rest filled", map[string]string{
			"GITHUB_API_URL": "https://ghe.example.com:8443/api/v3", "GITHUB_GRAPHQL_URL": "https://graphql.example.com",
		}, ghapi.Endpoints{API: ghes.API, GraphQL: "https://graphql.example.com", Server: ghes.Server}},
		{"only the GHE.com API", map[string]string{"GITHUB_API_URL": "https://api.octo.ghe.com"}, tenancy},
		{"only the GHE.com server", map[string]string{"GITHUB_SERVER_URL": "https://octo.ghe.com"}, tenancy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ghapi.EndpointsFromEnv(func(k string) string { return tt.env[k] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EndpointsFromEnv(%v) (-want +got):\n%s", tt.env, diff)
			}
		})
	}
}

func TestForHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want ghapi.Endpoints
	}{
		{"", ghapi.Endpoints{API: "https://api.github.com", GraphQL: "https://api.github.com/graphql", Server: "https://github.com"}},
		{"github.com", ghapi.Endpoints{API: "https://api.github.com", GraphQL: "https://api.github.com/graphql", Server: "https://github.com"}},
		{"GitHub.com", ghapi.Endpoints{API: "https://api.github.com", GraphQL: "https://api.github.com/graphql", Server: "https://github.com"}},
		{"ghe.example.com", ghapi.Endpoints{API: "https://ghe.example.com/api/v3", GraphQL: "https://ghe.example.com/api/graphql", Server: "https://ghe.example.com"}},
		{"ghe.example.com:8443", ghapi.Endpoints{API: "https://ghe.example.com:8443/api/v3", GraphQL: "https://ghe.example.com:8443/api/graphql", Server: "https://ghe.example.com:8443"}},
		{"octo.ghe.com", ghapi.Endpoints{API: "https://api.octo.ghe.com", GraphQL: "https://api.octo.ghe.com/graphql", Server: "https://octo.ghe.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ghapi.ForHost(tt.host)); diff != "" {
				t.Errorf("ForHost(%q) (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	good := ghapi.Options{Endpoints: ghapi.ForHost("github.com"), Token: "t", Owner: "octo", Repo: "demo", Transport: http.DefaultTransport}
	tests := []struct {
		name   string
		change func(*ghapi.Options)
	}{
		{"no owner", func(o *ghapi.Options) { o.Owner = "" }},
		{"no repository", func(o *ghapi.Options) { o.Repo = "" }},
		{"no API URL", func(o *ghapi.Options) { o.Endpoints.API = "" }},
		{"API URL without a host", func(o *ghapi.Options) { o.Endpoints.API = "/api/v3" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := good
			tt.change(&opts)
			if c, err := ghapi.New(opts); err == nil {
				t.Errorf("New(%+v) = %v, want an error", opts, c)
			}
		})
	}
	c, err := ghapi.New(good)
	if err != nil {
		t.Fatalf("New(%+v): %v", good, err)
	}
	if c.Owner() != "octo" || c.Repo() != "demo" || c.Endpoints() != good.Endpoints {
		t.Errorf("client for %s/%s at %+v, want octo/demo at %+v", c.Owner(), c.Repo(), c.Endpoints(), good.Endpoints)
	}
}

// TestTokenStaysOnAPIHost follows a Link header to another host: the client must not send it the token.
func TestTokenStaysOnAPIHost(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string // Authorization headers the other host received
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"name":"from-elsewhere"}]`)
	}))
	t.Cleanup(other.Close)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	// The same listener reached by another host name: the API host is 127.0.0.1.
	elsewhere := "http://localhost:" + port + "/repos/octo/demo/labels?page=2"

	srv := githubtest.New(t, githubtest.Options{})
	if !strings.Contains(srv.URL, "127.0.0.1") {
		t.Fatalf("test server at %s, want 127.0.0.1", srv.URL)
	}
	c := newClient(t, srv)
	var apiAuth []string
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.Path != "/repos/octo/demo/labels" {
			return false
		}
		mu.Lock()
		apiAuth = append(apiAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", elsewhere))
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode([]map[string]string{{"name": "here"}})
		return true
	})

	labels, err := c.Labels(context.Background())
	if err != nil {
		t.Fatalf("Labels: %v", err)
	}
	if diff := cmp.Diff([]ghapi.Label{{Name: "here"}, {Name: "from-elsewhere"}}, labels); diff != "" {
		t.Errorf("labels from both pages (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"token test-token"}, apiAuth); diff != "" {
		t.Errorf("Authorization at the API host (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{""}, seen); diff != "" {
		t.Errorf("Authorization at another host (-want +got):\n%s", diff)
	}
}
