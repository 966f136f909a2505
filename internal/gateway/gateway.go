// Package gateway is ralph's model gateway: a loopback HTTP proxy between one agent run and its model's
// API. The agent gets the gateway's URL and a key valid for that run only; the gateway forwards the few API
// paths the agent's CLI needs to the vendor, with the real key, which never leaves ralph, and only requests
// whose cost it can meter. It meters every response's usage as it streams through, prices it, and refuses
// further model requests once a budget is reached. A run whose CLI picks its vendor per model (opencode)
// is served several vendors by one gateway, each under a path of its own, all under the same budgets.
package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// Tokens counts the tokens of a request or a run. Input counts every prompt token, those the vendor's cache
// served (CacheRead) or stored (CacheWrite) included; Output counts every generated token, reasoning
// included.
type Tokens struct {
	Input      int
	CacheRead  int
	CacheWrite int
	Output     int
}

func (t Tokens) add(u Tokens, sign int) Tokens {
	t.Input += sign * u.Input
	t.CacheRead += sign * u.CacheRead
	t.CacheWrite += sign * u.CacheWrite
	t.Output += sign * u.Output
	return t
}

// Total is input plus output: what a token budget counts.
func (t Tokens) Total() int { return t.Input + t.Output }

// Spent is what one vendor's API was asked and billed in a run.
type Spent struct {
	Tokens
	Requests int
	CostUSD  float64
}

// Usage is what the gateway metered of one run.
type Usage struct {
	Tokens
	Requests int     // model requests forwarded (token counting excluded)
	CostUSD  float64 // at the prices of the table
	Model    string  // the model of the last response that named one
	// Unpriced names the models the price table did not know; they were priced at its dearest prices.
	Unpriced []string
	// ToolCalls counts the uses of the server tools the vendor ran (searches, say), priced per use.
	ToolCalls map[ServerTool]int
	// Unmetered counts the answers whose usage could not be read; each was counted as the worst its request
	// could bill (its body as input, its maximum output, at the dearest prices).
	Unmetered int
	// Vendors splits the requests, tokens and cost by the vendor that served them, for a run whose agent
	// talks to several (Options.More); the figures above are their sums.
	Vendors map[Vendor]Spent
}

// Limit is one budget for a run: a cost in US dollars, a number of tokens, or both (zero: none). Name says
// which budget it is, in the gateway's refusals and in Stop ("step", "issue", "day").
type Limit struct {
	Name   string
	Cost   float64
	Tokens int
	// Why is said to the agent when the limit refuses a request: what the budget is and how to raise it.
	Why string
}

func (l Limit) reached(u Usage) bool {
	return l.Cost > 0 && u.CostUSD >= l.Cost || l.Tokens > 0 && u.Total() >= l.Tokens
}

// Stop is the budget that stopped a run's model requests, and what had been spent then.
type Stop struct {
	Limit Limit
	Spent Usage
}

// Options configure a gateway for one run.
type Options struct {
	Vendor Vendor
	// Upstream is the vendor API's base URL (DefaultUpstream when ""); a path in it is a prefix of every
	// forwarded path (a proxy's /anthropic, say).
	Upstream   string
	Credential Credential
	// Prices price the responses; nil: the vendor's defaults.
	Prices Prices
	// Limits are the run's budgets: every model request is refused once any of them is reached.
	Limits []Limit
	// Transport reaches the vendor (proxies, CA bundle); nil: a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// MaxRequests is how many model requests may be in flight at once (0: DefaultMaxRequests); more wait
	// their turn. The budget is checked when a request's turn comes, so that every answer in flight can
	// overshoot a budget, and no more.
	MaxRequests int
	// ServerTools are the tools the vendor runs itself that the agent may ask for (gateway.server_tools);
	// a request that asks for any other is refused.
	ServerTools []ServerTool
	// Betas are the beta features (anthropic-beta, openai-beta values) the agent may ask for besides
	// those ralph knows (gateway.betas); a request that asks for any other is refused.
	Betas []string
	// More are the other vendors the run's agent may reach, for a CLI that picks its vendor per model
	// (opencode): each is served under the path /<vendor> of the same gateway (VendorURL), with its own
	// upstream, key, allow-lists and prices, and metered into the same usage, under the same Limits.
	More []API
}

// API is one more vendor a gateway serves (Options.More).
type API struct {
	Vendor     Vendor
	Upstream   string // DefaultUpstream when ""
	Credential Credential
	Prices     Prices // nil: the vendor's defaults
}

// door is one vendor's API as the gateway serves it: the first at the root, the others under /<vendor>.
type door struct {
	vendor   Vendor
	prefix   string // "" for Options.Vendor, "/<vendor>" for the others
	spec     spec
	allow    allowList
	upstream *url.URL
	cred     Credential
	prices   Prices
	dearest  Price // the price of an unknown model, and of an answer's worst case
}

func newDoor(a API, betas []string) (*door, error) {
	sp, err := specOf(a.Vendor)
	if err != nil {
		return nil, err
	}
	if a.Credential.Value == "" {
		return nil, fmt.Errorf("model gateway: no %s key: set %s in ralph's environment", a.Vendor, strings.Join(a.Vendor.CredentialNames(), " or "))
	}
	raw := a.Upstream
	if raw == "" {
		raw = a.Vendor.DefaultUpstream()
	}
	up, err := url.Parse(raw)
	if err != nil || (up.Scheme != "https" && up.Scheme != "http") || up.Host == "" {
		return nil, fmt.Errorf("model gateway: upstream %q is not an http(s) URL", raw)
	}
	if a.Prices == nil {
		a.Prices = DefaultPrices(a.Vendor)
	}
	return &door{vendor: a.Vendor, spec: sp, allow: newAllowList(a.Vendor, betas), upstream: up, cred: a.Credential, prices: a.Prices, dearest: a.Prices.Dearest()}, nil
}

// DefaultMaxRequests lets a CLI's side requests and a few sub-agents run alongside its main loop, and
// bounds what answers in flight can spend past a budget.
const DefaultMaxRequests = 4

// maxConns bounds the agent's connections the gateway serves at once: many times the requests it lets in
// flight, for a CLI that opens a connection a request.
const maxConns = 64

// Gateway is one run's gateway, serving on loopback until Close.
type Gateway struct {
	opts  Options
	doors []*door // Options.Vendor's first
	key   string
	proxy *httputil.ReverseProxy
	srv   *http.Server
	ln    net.Listener

	// slots hold one token per model request in flight, until its answer is metered to its end.
	slots chan struct{}
	// bodies hold one token per request whose body the gateway reads or holds (up to maxRequest each),
	// until it is answered: the agent's requests cost ralph at most cap(bodies) bodies at a time, however
	// many it sends at once.
	bodies chan struct{}
	// answers ends the reading of answers the agent left (their usage is read to the end, up to Close).
	answers context.Context
	cut     context.CancelFunc
	serving sync.WaitGroup // requests being served, until Close

	mu       sync.Mutex
	closed   bool
	usage    Usage
	calls    [len(ServerTools)]int
	vendors  map[Vendor]Spent
	unpriced map[string]bool
	stop     *Stop
	refused  []string // what was refused, one line each, for the log
}

// Start makes a gateway and serves it on a loopback port of its own.
func Start(opts Options) (*Gateway, error) {
	g, err := New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model gateway: listen on loopback: %w", err)
	}
	g.ln = ln
	// No read or write timeout: a model's stream may run for many minutes. The agent's connections end
	// with Close, an idle one after two minutes, and at most maxConns are served at once: more wait in the
	// kernel's queue, unaccepted, costing ralph nothing.
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = g.srv.Serve(netutil.LimitListener(ln, maxConns)) }()
	return g, nil
}

// New makes a gateway without serving it (Start serves it; a test may serve it its own way).
func New(opts Options) (*Gateway, error) {
	first, err := newDoor(API{Vendor: opts.Vendor, Upstream: opts.Upstream, Credential: opts.Credential, Prices: opts.Prices}, opts.Betas)
	if err != nil {
		return nil, err
	}
	opts.Prices = first.prices
	doors := []*door{first}
	for _, a := range opts.More {
		if slices.ContainsFunc(doors, func(d *door) bool { return d.vendor == a.Vendor }) {
			return nil, fmt.Errorf("model gateway: the %s API is served twice", a.Vendor)
		}
		d, err := newDoor(a, opts.Betas)
		if err != nil {
			return nil, err
		}
		d.prefix = "/" + string(a.Vendor)
		doors = append(doors, d)
	}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	g := &Gateway{opts: opts, doors: doors, key: "ralph-gw-" + hex.EncodeToString(key), unpriced: map[string]bool{}, vendors: map[Vendor]Spent{},
		slots: make(chan struct{}, opts.MaxRequests), bodies: make(chan struct{}, 2*opts.MaxRequests)}
	g.answers, g.cut = context.WithCancel(context.Background())
	transport := opts.Transport
	if transport == nil {
		// A transport of its own: another user of the process's default one (CloseIdleConnections, say)
		// must not touch the run's streams.
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:       g.rewrite,
		Transport:     transport,
		FlushInterval: -1, // streams pass through as they come
		BufferPool:    buffers,
		// A stream the agent stops reading (its CLI was stopped) is not ralph's error to print.
		ErrorLog:       log.New(io.Discard, "", 0),
		ModifyResponse: g.meterResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			d := g.doors[0]
			if f, ok := r.Context().Value(routeKey{}).(forwarded); ok {
				d = f.door
			}
			g.note("could not reach %s for %s %s: %v", d.upstream.Host, r.Method, r.URL.Path, err)
			d.refuse(w, http.StatusBadGateway, codeUpstream, "ralph's model gateway could not reach the model API: "+err.Error())
		},
	}
	return g, nil
}

// buffers are the proxy's copy buffers, shared by every gateway of the process.
var buffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) Get() []byte  { return *p.pool.Get().(*[]byte) }
func (p *bufferPool) Put(b []byte) { p.pool.Put(&b) }

// URL is the gateway's base URL, which the agent uses in place of the vendor's.
func (g *Gateway) URL() string { return "http://" + g.ln.Addr().String() }

// VendorURL is the base URL of vendor's API through the gateway: URL for Options.Vendor, URL/<vendor>
// for one of Options.More; "" for a vendor it does not serve.
func (g *Gateway) VendorURL(v Vendor) string {
	for _, d := range g.doors {
		if d.vendor == v {
			return g.URL() + d.prefix
		}
	}
	return ""
}

// Key is the key the agent presents: it is good for this gateway only, which lives as long as the run.
func (g *Gateway) Key() string { return g.key }

// Usage is what the gateway has metered so far.
func (g *Gateway) Usage() Usage {
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.usage
	u.Unpriced = nil
	for m := range g.unpriced {
		u.Unpriced = append(u.Unpriced, m)
	}
	for i, n := range g.calls {
		if n > 0 {
			if u.ToolCalls == nil {
				u.ToolCalls = map[ServerTool]int{}
			}
			u.ToolCalls[ServerTools[i]] = n
		}
	}
	if len(g.doors) > 1 {
		u.Vendors = map[Vendor]Spent{}
		for _, d := range g.doors {
			u.Vendors[d.vendor] = g.vendors[d.vendor]
		}
	}
	return u
}

// Stopped is the budget that refused a model request, or nil when none did.
func (g *Gateway) Stopped() *Stop {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop == nil {
		return nil
	}
	s := *g.stop
	return &s
}

// Refused lists what the gateway refused or could not forward, one line each.
func (g *Gateway) Refused() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refused...)
}

// Close stops serving and ends every connection: the run's key is good for nothing after it. The answers
// still coming are read to their end, for their usage (the vendor bills them whether or not the agent
// read them), for at most closeGrace; then they are cut.
func (g *Gateway) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	var err error
	if g.srv != nil {
		err = g.srv.Close()
	}
	done := make(chan struct{})
	go func() { g.serving.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeGrace):
		g.note("answers still coming %s after the run were cut: their usage is counted as far as they said it", closeGrace)
	}
	g.cut()
	<-done
	return err
}

// closeGrace is how long Close waits for the answers in flight: most end in seconds, the longest in a
// few minutes.
const closeGrace = 2 * time.Minute

func (g *Gateway) note(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.refused) < 100 {
		g.refused = append(g.refused, fmt.Sprintf(format, args...))
	}
}

// ServeHTTP checks the run's key, the path, the request and the budget, then forwards the request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	what := r.Method + " " + shownPath(r.URL.Path)
	d := g.door(r)
	if !g.authorized(r) {
		g.note("refused %s: not the run's key", what)
		d.refuse(w, http.StatusUnauthorized, codeKey, "ralph's model gateway: this key is not good here")
		return
	}
	rt, ok := d.route(r)
	if !ok {
		g.note("refused %s: not a model API path ralph forwards", what)
		d.refuse(w, http.StatusForbidden, codePath, fmt.Sprintf("ralph's model gateway forwards only the %s model API; %s %s is refused", g.served(), r.Method, r.URL.Path))
		return
	}
	if why := d.allow.header(r.Header); why != "" {
		g.note("refused %s: %s", what, why)
		d.refuse(w, http.StatusBadRequest, codeRequest, "ralph's model gateway refuses this request: "+why)
		return
	}
	g.mu.Lock()
	closed := g.closed
	if !closed {
		g.serving.Add(1)
	}
	g.mu.Unlock()
	if closed {
		d.refuse(w, http.StatusServiceUnavailable, codeKey, "ralph's model gateway is closed: the run is over")
		return
	}
	defer g.serving.Done()
	// A place among the bodies held before the body is read: the requests in flight hold theirs until
	// their answers end, and as many more may wait for a slot.
	select {
	case g.bodies <- struct{}{}:
		defer func() { <-g.bodies }()
	case <-r.Context().Done():
		return
	case <-g.answers.Done():
		return
	}
	// The request is read whole before it is forwarded: to read what it asks for, and because, passed on as
	// it comes, the server would close it once the answer's headers are written, and the transport's last
	// read of it would then cut the connection to the vendor, and the answer streaming on it.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil {
		d.refuse(w, http.StatusBadRequest, codeRequest, "ralph's model gateway could not read the request: "+err.Error())
		return
	}
	if len(body) > maxRequest {
		g.note("refused %s: a request over %d MiB", what, maxRequest>>20)
		d.refuse(w, http.StatusRequestEntityTooLarge, codeRequest, fmt.Sprintf("ralph's model gateway takes requests of at most %d MiB", maxRequest>>20))
		return
	}
	// What the gateway reads is what the vendor reads: a body in another encoding is not.
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		g.note("refused %s: a request body in the encoding %s", what, quoted(enc))
		d.refuse(w, http.StatusBadRequest, codeRequest, "ralph's model gateway takes request bodies without a Content-Encoding; send the JSON as it is")
		return
	}
	a, why := g.inspect(d, rt, body)
	if why != "" {
		g.note("refused %s: %s", what, why)
		d.refuse(w, http.StatusBadRequest, codeRequest, "ralph's model gateway refuses this request: "+why)
		return
	}
	if rt.metered {
		select {
		case g.slots <- struct{}{}:
			defer func() { <-g.slots }()
		case <-r.Context().Done():
			return
		case <-g.answers.Done():
			return
		}
		g.mu.Lock()
		var hit *Limit
		for i := range g.opts.Limits {
			if l := g.opts.Limits[i]; l.reached(g.usage) {
				hit = &l
				break
			}
		}
		if hit != nil && g.stop == nil {
			g.stop = &Stop{Limit: *hit, Spent: g.usage}
		}
		if hit == nil {
			g.usage.Requests++
			s := g.vendors[d.vendor]
			s.Requests++
			g.vendors[d.vendor] = s
		}
		spent := g.usage
		g.mu.Unlock()
		if hit != nil {
			g.note("refused %s: the %s budget is reached", what, hit.Name)
			msg := fmt.Sprintf("ralph: budget reached, no more model requests in this step: %s (this step has spent $%.4f, %d tokens)", hit.Why, spent.CostUSD, spent.Total())
			d.refuse(w, http.StatusBadRequest, codeBudget, msg)
			return
		}
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.Header.Del("Content-Length")
	r.Header.Del("Transfer-Encoding")
	// The request to the vendor outlives the agent's: an answer the agent leaves is still read to its end
	// (meter.Close), for its usage, until the gateway closes.
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), routeKey{}, forwarded{rt, d, a, r.Method + " " + r.URL.Path}))
	defer cancel()
	defer context.AfterFunc(g.answers, cancel)()
	g.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// shownPath is a request's path as the log names it: the agent chose it, so anything but a short path of
// printable ASCII is quoted and cut short, and no line of the log is the agent's.
func shownPath(p string) string {
	if len(p) <= 100 && !strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '"' || r == '\\' }) {
		return p
	}
	return quoted(p)
}

// maxRequest bounds one request to the model: a long context with images is a few MiB.
const maxRequest = 64 << 20

// routeKey carries a forwarded request's route and what it asked for to its response.
type routeKey struct{}

type forwarded struct {
	route
	door *door
	ask  ask
	what string // method and path, for the log
}

// authorized: the request carries the run's key where the vendor's clients put theirs.
func (g *Gateway) authorized(r *http.Request) bool {
	candidates := []string{r.Header.Get("X-Api-Key"), r.Header.Get("X-Goog-Api-Key"), r.URL.Query().Get("key")}
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		candidates = append(candidates, a[7:])
	}
	for _, c := range candidates {
		if c != "" && subtle.ConstantTimeCompare([]byte(c), []byte(g.key)) == 1 {
			return true
		}
	}
	return false
}

// door is the vendor a request's path is for: the one whose prefix it starts with (the prefix followed by
// a slash), or Options.Vendor's.
func (g *Gateway) door(r *http.Request) *door {
	for _, d := range g.doors[1:] {
		if strings.HasPrefix(r.URL.Path, d.prefix+"/") {
			return d
		}
	}
	return g.doors[0]
}

// served names the vendors the gateway serves, for refusals.
func (g *Gateway) served() string {
	var names []string
	for _, d := range g.doors {
		names = append(names, string(d.vendor))
	}
	return strings.Join(names, " and ")
}

// route is the request's route, when the gateway forwards it. The path must be plain: an escaped
// character (an encoded slash, say) could mean another path to the vendor than the one checked here.
func (d *door) route(r *http.Request) (route, bool) {
	if r.URL.RawPath != "" || strings.Contains(r.URL.Path, "..") {
		return route{}, false
	}
	path := strings.TrimPrefix(r.URL.Path, d.prefix)
	for _, rt := range d.spec.routes {
		if r.Method == rt.method && rt.path.MatchString(path) {
			return rt, true
		}
	}
	return route{}, false
}

// rewrite makes the request to the vendor: the upstream URL, only the query parameters the API takes,
// and the real key in place of anything the agent sent to identify itself.
func (g *Gateway) rewrite(pr *httputil.ProxyRequest) {
	d := pr.In.Context().Value(routeKey{}).(forwarded).door
	q := url.Values{}
	in := pr.In.URL.Query()
	for _, k := range d.spec.query {
		if v, ok := in[k]; ok {
			q[k] = v
		}
	}
	// The vendor's path, without the prefix the gateway serves it under.
	pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, d.prefix)
	pr.Out.URL.RawPath = ""
	pr.SetURL(d.upstream)
	pr.Out.URL.RawQuery = q.Encode()
	h := pr.Out.Header
	for _, k := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Cookie", "Proxy-Authorization", "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip"} {
		h.Del(k)
	}
	// The gateway reads what streams back: let the transport ask for gzip and decompress it, rather than
	// pass through an encoding the meter cannot read.
	h.Del("Accept-Encoding")
	d.spec.credential(h, d.cred)
}

// refuse answers with an error in the vendor's own shape, which its CLI shows.
func (d *door) refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(d.spec.errorBody(status, code, msg))
}
