package gateway

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
)

// bigContent makes a scripted model's answer far larger than what the sockets between the gateway and a
// client that stops reading can hold (the client's receive buffer is set small below; the gateway's send
// buffer grows to net.ipv4.tcp_wmem's maximum, 4 MiB by default): the usage at the answer's end cannot
// have passed the gateway when the client hangs up, whatever the timing.
var bigContent = strings.Repeat("a", 8<<20)

// scripted is one scripted vendor answering one model request through the gateway.
type scripted struct {
	name   string
	vendor Vendor
	path   string
	body   string
	model  func(t *testing.T, key string) (url string, billed func() agenttest.Billed)
}

var scriptedVendors = []scripted{
	{"anthropic stream", Anthropic, "/v1/messages",
		`{"model":"claude-sonnet-4-5","stream":true,"tools":[{"name":"Write"}],"messages":[{"role":"user","content":"write /doc.md"}]}`,
		func(t *testing.T, key string) (string, func() agenttest.Billed) {
			m := agenttest.NewAnthropic(t, key, "/doc.md", bigContent)
			return m.URL, m.Billed
		}},
	{"anthropic json", Anthropic, "/v1/messages",
		`{"model":"claude-sonnet-4-5","tools":[{"name":"Write"}],"messages":[{"role":"user","content":"write /doc.md"}]}`,
		func(t *testing.T, key string) (string, func() agenttest.Billed) {
			m := agenttest.NewAnthropic(t, key, "/doc.md", bigContent)
			return m.URL, m.Billed
		}},
	{"openai stream", OpenAI, "/v1/responses",
		`{"model":"gpt-5","stream":true,"input":[{"role":"user","content":"write /doc.md"}],"tools":[{"type":"function","name":"exec_command"}]}`,
		func(t *testing.T, key string) (string, func() agenttest.Billed) {
			m := agenttest.NewOpenAI(t, key, "/doc.md", bigContent)
			return m.URL, m.Billed
		}},
	{"gemini stream", Gemini, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"write /doc.md"}]}],"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`,
		func(t *testing.T, key string) (string, func() agenttest.Billed) {
			m := agenttest.NewGemini(t, key, "/doc.md", bigContent)
			return m.URL, m.Billed
		}},
	{"gemini json", Gemini, "/v1beta/models/gemini-2.5-pro:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"write /doc.md"}]}],"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`,
		func(t *testing.T, key string) (string, func() agenttest.Billed) {
			m := agenttest.NewGemini(t, key, "/doc.md", bigContent)
			return m.URL, m.Billed
		}},
}

// perAnswer is what the vendor bills for each scripted answer.
var perAnswer = Tokens{Input: agenttest.InputTokens, CacheRead: agenttest.CachedTokens, Output: agenttest.OutputTokens}

// hangUp sends a model request through the gateway, reads the first bytes of the answer and hangs up; it
// returns the answer's status.
func hangUp(t *testing.T, g *Gateway, sc scripted) int {
	t.Helper()
	// A receive buffer of its own, small: the client does not read what it does not want.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequest("POST", g.URL()+sc.path, strings.NewReader(sc.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.Key())
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	_, _ = io.ReadFull(resp.Body, make([]byte, 16))
	resp.Body.Close()
	return resp.StatusCode
}

func startScripted(t *testing.T, sc scripted, opts Options) (*Gateway, func() agenttest.Billed) {
	t.Helper()
	key := "real-" + string(sc.vendor)
	url, billed := sc.model(t, key)
	opts.Vendor, opts.Upstream, opts.Credential = sc.vendor, url, Credential{sc.vendor.CredentialNames()[0], key}
	return start(t, opts), billed
}

// An answer the agent stops reading is metered whole: the vendor billed all of it, input and output.
func TestAbandonedAnswerCounted(t *testing.T) {
	t.Parallel()
	for _, sc := range scriptedVendors {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			g, billed := startScripted(t, sc, Options{})
			if status := hangUp(t, g, sc); status != 200 {
				t.Fatalf("status %d", status)
			}
			g.Close() // the run ends: what was in flight is counted by then
			if b := billed(); b.Requests != 1 {
				t.Fatalf("the vendor billed %+v, want 1 answer", b)
			}
			if diff := cmp.Diff(perAnswer, g.Usage().Tokens); diff != "" {
				t.Errorf("metered tokens of an abandoned answer (-want +got):\n%s", diff)
			}
		})
	}
}

// A budget that an abandoned answer reached refuses the next request.
func TestAbandonedAnswerSpendsTheBudget(t *testing.T) {
	t.Parallel()
	for _, sc := range scriptedVendors {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			// One request at a time: the next waits for the abandoned one to be metered.
			g, billed := startScripted(t, sc, Options{Limits: []Limit{{Name: "step", Tokens: perAnswer.Total(), Why: "agent.max_tokens"}}, MaxRequests: 1})
			if status := hangUp(t, g, sc); status != 200 {
				t.Fatalf("status %d", status)
			}
			if status := hangUp(t, g, sc); status != 400 {
				t.Errorf("the request after an abandoned answer that reached the budget: %d, want 400, refused", status)
			}
			g.Close()
			if b, u := billed(), g.Usage(); b.Requests != 1 || u.Requests != 1 || g.Stopped() == nil {
				t.Errorf("the vendor billed %d answers, the gateway forwarded %d (usage %+v), stopped %v; want 1, 1 and stopped", b.Requests, u.Requests, u.Tokens, g.Stopped())
			}
		})
	}
}

// Many requests at once, all abandoned: each is metered whole, and no more than MaxRequests reach the
// vendor at a time.
func TestManyAbandonedAnswers(t *testing.T) {
	t.Parallel()
	const n, most = 8, 3
	sc := scriptedVendors[0]
	tr := &inFlight{RoundTripper: http.DefaultTransport.(*http.Transport).Clone()}
	g, billed := startScripted(t, sc, Options{Transport: tr, MaxRequests: most})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if status := hangUp(t, g, sc); status != 200 {
				t.Errorf("status %d", status)
			}
		})
	}
	wg.Wait()
	g.Close()
	if b := billed(); b.Requests != n {
		t.Fatalf("the vendor billed %d answers, want %d", b.Requests, n)
	}
	want := Tokens{Input: n * perAnswer.Input, CacheRead: n * perAnswer.CacheRead, Output: n * perAnswer.Output}
	if diff := cmp.Diff(want, g.Usage().Tokens); diff != "" {
		t.Errorf("metered tokens of %d abandoned answers (-want +got):\n%s", n, diff)
	}
	if tr.most > most {
		t.Errorf("%d requests reached the vendor at once, want at most %d", tr.most, most)
	}
}

// inFlight counts the requests to the vendor whose answer is not closed yet.
type inFlight struct {
	http.RoundTripper
	mu        sync.Mutex
	now, most int
}

func (f *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.now++
	f.most = max(f.most, f.now)
	f.mu.Unlock()
	resp, err := f.RoundTripper.RoundTrip(r)
	if err != nil {
		f.done()
		return nil, err
	}
	resp.Body = &onClose{ReadCloser: resp.Body, f: f.done}
	return resp, nil
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now--
}

type onClose struct {
	io.ReadCloser
	once sync.Once
	f    func()
}

func (c *onClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.f)
	return err
}
