package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// MaxRefused bounds the refused hosts a Proxy remembers: the agent chooses them, and they end up in the
// status comment.
const MaxRefused = 20

// maxSeen bounds the refused hosts a Proxy remembers to count each once: beyond it, a host refused again
// may be counted again among the more.
const maxSeen = 1000

// maxHostLen bounds one remembered host: a DNS name is at most 253 characters.
const maxHostLen = 253

// dialTimeout bounds a connection to an allowed host.
const dialTimeout = 30 * time.Second

// Options configure a Proxy.
type Options struct {
	// Allow is the allow-list (see [Policy]).
	Allow []string
	// Hosts resolve names without asking DNS (RALPH_NETWORK_RESOLVE, tests): a name listed here is taken
	// to be at these addresses, loopback included, since ralph's own environment said so.
	Hosts map[string][]netip.Addr
	// Resolve looks a name up; nil: the system's resolver. Addresses it gives that the agent could not
	// be meant to reach through a public name (loopback, link-local such as a cloud's metadata service,
	// unspecified, multicast) are dropped.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Upstream is the runner's own proxy (UpstreamFromEnv); nil: connect directly.
	Upstream *Upstream
	// Dial connects to an address; nil: a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConns is how many of the agent's connections the proxy serves at once (0: DefaultMaxConns);
	// more wait in the kernel's queue, unaccepted, until one ends.
	MaxConns int
}

// DefaultMaxConns is far more than a package manager opens at once (npm's default is 15 sockets a host),
// and bounds what the agent's connections cost ralph: a goroutine and buffers each.
const DefaultMaxConns = 256

// Proxy is one run's forward proxy, listening on a loopback port.
type Proxy struct {
	policy   *Policy
	opts     Options
	ln       net.Listener
	srv      *http.Server
	forward  *httputil.ReverseProxy
	mu       sync.Mutex
	refused  []string
	seen     map[string]bool
	more     int  // refused hosts beyond MaxRefused
	closed   bool // under mu: Close has begun, and no tunnel may join tunnels
	tunnels  sync.WaitGroup
	closing  chan struct{}
	closeOne sync.Once
	// life ends with Close: a plain HTTP request's, and so the connection it may upgrade to (a WebSocket,
	// h2c), which the server no longer tracks once upgraded.
	life context.Context
	end  context.CancelFunc
}

// Start listens on a free port of 127.0.0.1 and serves until Close.
func Start(opts Options) (*Proxy, error) {
	policy, err := NewPolicy(opts.Allow)
	if err != nil {
		return nil, err
	}
	if opts.Dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		opts.Dial = d.DialContext
	}
	if opts.Resolve == nil {
		opts.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	hosts := map[string][]netip.Addr{}
	for h, a := range opts.Hosts {
		hosts[normalize(h)] = a
	}
	opts.Hosts = hosts
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ralph's network proxy: %w", err)
	}
	p := &Proxy{policy: policy, opts: opts, ln: ln, seen: map[string]bool{}, closing: make(chan struct{})}
	p.life, p.end = context.WithCancel(context.Background())
	transport := &http.Transport{
		// The upstream for plain HTTP is chosen per request; a direct connection goes through p.dial,
		// which resolves the name itself and refuses what the policy does not allow.
		Proxy: func(r *http.Request) (*url.URL, error) {
			host, port := hostPort(r.URL)
			return opts.Upstream.For(host, port, false), nil
		},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			// The runner's proxy for plain HTTP is dialled as it is: the request's host was checked.
			if up := opts.Upstream; up != nil && up.HTTP != nil && addr == proxyAddr(up.HTTP) {
				return opts.Dial(ctx, network, addr)
			}
			return p.dialDirect(ctx, addr)
		},
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.URL.Host
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "ralph's network proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	go func() { _ = p.srv.Serve(netutil.LimitListener(ln, opts.MaxConns)) }()
	return p, nil
}

// URL is the proxy's address as the agent's HTTP(S)_PROXY: http://127.0.0.1:PORT.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Port is the loopback port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Refused are the hosts refused so far, each once, in the order first refused: a host, or host:port when
// the host is allowed on other ports; at most MaxRefused. More is how many others there were (beyond
// maxSeen distinct hosts, a host refused again may count again).
func (p *Proxy) Refused() (hosts []string, more int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...), p.more
}

// Close stops the proxy and ends every connection through it: nothing of the agent's traffic outlives
// its step.
func (p *Proxy) Close() error {
	var err error
	p.closeOne.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		close(p.closing)
		p.end()
		err = p.srv.Close()
		p.tunnels.Wait()
	})
	return err
}

func (p *Proxy) refuse(host string) {
	// The agent chose the host: anything but a host's characters is kept quoted.
	if strings.IndexFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:[]*%", r))
	}) >= 0 {
		host = strconv.QuoteToASCII(host)
	}
	if len(host) > maxHostLen {
		host = host[:maxHostLen] + "…"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[host] {
		return
	}
	if len(p.seen) < maxSeen {
		p.seen[host] = true
	}
	if len(p.refused) >= MaxRefused {
		p.more++
		return
	}
	p.refused = append(p.refused, host)
}

// RefusedError is a host the allow-list does not hold, or that resolves to no address the agent may reach.
type RefusedError struct {
	Host string // as refused: host, or host:port
	Why  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is refused: %s", e.Host, e.Why)
}

// check refuses host:port unless the policy allows it, and remembers the refusal.
func (p *Proxy) check(host string, port int) error {
	if p.policy.Allows(host, port) {
		return nil
	}
	name := normalize(host)
	shown := name
	why := "not on the allow-list (network.allow in .github/ralph.yml)"
	if p.policy.allowsHost(name) {
		// The host with the port, as network.allow would take it.
		shown = net.JoinHostPort(name, strconv.Itoa(port))
		why = "the allow-list holds this host on other ports only (network.allow in .github/ralph.yml)"
	}
	p.refuse(shown)
	return &RefusedError{Host: shown, Why: why}
}

// resolve finds host's addresses as the proxy connects to them on port: the fixed ones of Options.Hosts,
// an IP address as it is (the allow-list named it), or the resolver's that are global unicast (Global)
// or that the allow-list names themselves.
func (p *Proxy) resolve(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	host = normalize(host)
	if addrs, ok := p.opts.Hosts[host]; ok {
		return addrs, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil // allowed by address: the config named it
	}
	found, err := p.opts.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	for _, a := range found {
		if Global(a) || p.policy.Allows(a.Unmap().String(), port) {
			addrs = append(addrs, a.Unmap())
		}
	}
	if len(addrs) == 0 {
		p.refuse(host)
		return nil, &RefusedError{Host: host, Why: "it resolves to no global unicast address (only private, shared, loopback, link-local, " +
			"unique-local, reserved or documentation ones, in some form, or a cloud's metadata service); name the address itself in network.allow to reach it"}
	}
	return addrs, nil
}

// dialDirect connects to an allowed host:port itself, trying each address the name resolves to.
func (p *Proxy) dialDirect(ctx context.Context, hostport string) (net.Conn, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, err
	}
	if err := p.check(host, port); err != nil {
		return nil, err
	}
	addrs, err := p.resolve(ctx, host, port)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		c, err := p.opts.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialTunnel opens a byte stream to host:port for CONNECT: through the upstream proxy when the runner has
// one for it, else directly. The policy is checked by name either way.
func (p *Proxy) dialTunnel(ctx context.Context, host string, port int) (net.Conn, error) {
	if err := p.check(host, port); err != nil {
		return nil, err
	}
	up := p.opts.Upstream.For(host, port, true)
	if up == nil {
		return p.dialDirect(ctx, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	c, err := p.opts.Dial(ctx, "tcp", proxyAddr(up))
	if err != nil {
		return nil, fmt.Errorf("the runner's proxy %s: %w", up.Host, err)
	}
	if up.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: up.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("the runner's proxy %s: %w", up.Host, err)
		}
		c = tc
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if u := up.User; u != nil {
		pw, _ := u.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the runner's proxy %s: %w", up.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("the runner's proxy %s answered %s", up.Host, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// proxyAddr is a proxy URL's host:port, the scheme's port when it names none.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// bufferedConn is a connection some of whose input was already read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// hostPort is a URL's host and port, the scheme's default port when it has none.
func hostPort(u *url.URL) (string, int) {
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	return u.Hostname(), port
}

// ServeHTTP is the proxy: CONNECT opens a tunnel, an absolute-form request is forwarded, anything else (a
// request to the proxy as if it were a server) is refused.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" || (r.URL.Scheme != "http") {
		http.Error(w, "ralph's network proxy forwards http:// requests in absolute form and CONNECT tunnels only", http.StatusBadRequest)
		return
	}
	host, port := hostPort(r.URL)
	if err := p.check(host, port); err != nil {
		http.Error(w, "ralph's network proxy: "+err.Error(), http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(p.life, cancel)()
	p.forward.ServeHTTP(w, r.WithContext(ctx))
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, ps, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(ps)
	if err != nil || perr != nil || host == "" || port < 1 || port > 65535 {
		http.Error(w, "ralph's network proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	upstream, err := p.dialTunnel(ctx, host, port)
	cancel()
	if err != nil {
		status := http.StatusBadGateway
		var refused *RefusedError
		if errors.As(err, &refused) {
			status = http.StatusForbidden
		}
		http.Error(w, "ralph's network proxy: "+err.Error(), status)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "ralph's network proxy: cannot tunnel here", http.StatusInternalServerError)
		return
	}
	client, rw, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	// A tunnel joins tunnels only while the proxy is open: Close waits for those, and ends the others here.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		upstream.Close()
		return
	}
	p.tunnels.Add(1)
	p.mu.Unlock()
	go p.splice(client, rw.Reader, upstream)
}

// splice copies both ways until either side is done, or the proxy closes. What the client sent after its
// CONNECT, already read into buffered, goes first.
func (p *Proxy) splice(client net.Conn, buffered *bufio.Reader, upstream net.Conn) {
	defer p.tunnels.Done()
	done := make(chan struct{}, 2)
	go func() {
		var src io.Reader = client
		if buffered != nil && buffered.Buffered() > 0 {
			src = io.MultiReader(io.LimitReader(buffered, int64(buffered.Buffered())), client)
		}
		_, _ = io.Copy(upstream, src)
		closeWrite(upstream)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
		done <- struct{}{}
	}()
	select {
	case <-done:
		select {
		case <-done:
		case <-p.closing:
		}
	case <-p.closing:
	}
	client.Close()
	upstream.Close()
}

// closeWrite half-closes c where it can, so that the other side sees the end of what was sent.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// ParseHosts reads fixed name resolutions, "name=address,name=address" (RALPH_NETWORK_RESOLVE): a name
// may be listed more than once for more addresses.
func ParseHosts(s string) (map[string][]netip.Addr, error) {
	hosts := map[string][]netip.Addr{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		name, addr, ok := strings.Cut(e, "=")
		a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(addr), "[]"))
		if !ok || err != nil || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%q is not name=address", e)
		}
		n := normalize(strings.TrimSpace(name))
		hosts[n] = append(hosts[n], a.Unmap())
	}
	return hosts, nil
}
