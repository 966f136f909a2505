package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Metering: the usage of each model response, read as it passes to the agent, and the gateway's totals.

// maxBody bounds what the meter keeps of one JSON body or one event: far more than a model's answer.
const maxBody = 16 << 20

// meterResponse reads the usage of a model response as it passes to the agent.
func (g *Gateway) meterResponse(resp *http.Response) error {
	f, ok := resp.Request.Context().Value(routeKey{}).(forwarded)
	if !ok || !f.metered {
		return nil
	}
	// The vendor bills the answers it gives, not its errors.
	m := &meter{g: g, rc: resp.Body, f: f, billed: resp.StatusCode/100 == 2}
	if strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		m.sse = true
	}
	resp.Body = m
	return nil
}

// meter passes a response body through and reads its usage on the way: event by event for a stream, at
// the end for a JSON body.
type meter struct {
	g      *Gateway
	rc     io.ReadCloser
	sse    bool
	f      forwarded
	billed bool // a 2xx answer: the vendor bills it, and it must say its usage

	line    []byte // the stream's current line
	skip    bool   // the current line is too long to keep
	body    bytes.Buffer
	over    bool // the JSON body is too long to keep
	r       reading
	counted reading // what of r is in the gateway's totals
	ended   bool
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.rc.Read(p)
	if n > 0 {
		m.feed(p[:n])
	}
	if err != nil {
		m.end()
	}
	return n, err
}

// Close reads what the agent left of the answer, for its usage: the vendor bills all of it. The reading is
// bounded by maxLeft and by the gateway's Close.
func (m *meter) Close() error {
	if !m.ended {
		buf := buffers.Get()
		_, err := io.CopyBuffer(io.Discard, io.LimitReader(m, maxLeft), buf)
		buffers.Put(buf)
		if err == nil && !m.ended {
			m.g.note("an answer the agent left had more than %d MiB: its usage is counted as far as it said it", maxLeft>>20)
		}
	}
	m.end()
	return m.rc.Close()
}

// maxLeft bounds what ralph reads of an answer the agent left: several times the longest answer (an
// OpenAI stream repeats its output in its last event).
const maxLeft = 64 << 20

func (m *meter) feed(p []byte) {
	if !m.sse {
		if !m.over && m.body.Len()+len(p) <= maxBody {
			m.body.Write(p)
		} else {
			m.over = true
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !m.skip {
			if len(m.line)+len(chunk) > maxBody {
				m.skip, m.line = true, m.line[:0]
			} else {
				m.line = append(m.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !m.skip {
			m.event(m.line)
		}
		m.line, m.skip = m.line[:0], false
		p = p[i+1:]
	}
}

// event reads one line of a stream: only data lines that speak of usage or the model are parsed.
func (m *meter) event(line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if !bytes.Contains(data, []byte(`usage`)) && !bytes.Contains(data, []byte(`"model`)) {
		return // a text delta: most of a stream
	}
	m.f.door.spec.event(data, &m.r)
	m.g.update(m)
}

func (m *meter) end() {
	if m.ended {
		return
	}
	m.ended = true
	switch {
	case m.sse:
		if len(m.line) > 0 && !m.skip {
			m.event(m.line)
		}
	case m.over:
		m.g.note("a model response over %d MiB could not be metered", maxBody>>20)
	default:
		m.f.door.spec.json(m.body.Bytes(), &m.r)
	}
	if m.billed && !m.r.final {
		// The answer ended without its usage (cut short, or in a shape ralph does not know): it is counted
		// as the worst its request could bill, so that a budget stops what cannot be metered.
		m.r.worst = true
		m.r.Input, m.r.Output = max(m.r.Input, m.f.ask.input), max(m.r.Output, m.f.ask.output)
		m.r.CacheRead, m.r.CacheWrite = 0, 0
	}
	m.g.update(m)
	if m.r.worst {
		m.g.note("the answer to %s gave no usage ralph could read: counted as the worst it could bill, %d tokens in and %d out at the dearest prices ($%.4f)",
			m.f.what, m.r.Input, m.r.Output, m.f.door.cost(m.r))
	}
}

// update moves a response's latest reading into the gateway's totals.
func (g *Gateway) update(m *meter) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.r == m.counted {
		return
	}
	d := m.f.door
	g.usage.Tokens = g.usage.Tokens.add(m.counted.Tokens, -1).add(m.r.Tokens, 1)
	cost := d.cost(m.r) - d.cost(m.counted)
	g.usage.CostUSD += cost
	s := g.vendors[d.vendor]
	s.Tokens = s.Tokens.add(m.counted.Tokens, -1).add(m.r.Tokens, 1)
	s.CostUSD += cost
	g.vendors[d.vendor] = s
	for i := range g.calls {
		g.calls[i] += m.r.calls[i] - m.counted.calls[i]
	}
	if m.r.worst && !m.counted.worst {
		g.usage.Unmetered++
	}
	if m.r.model != "" {
		g.usage.Model = m.r.model
	}
	if !m.r.worst && m.r.Tokens != (Tokens{}) {
		if _, _, known := d.prices.For(m.r.model); !known {
			g.unpriced[m.r.model] = true
		}
	}
	m.counted = m.r
}

// cost is what a reading costs: its tokens and its server tools' uses at its model's prices, or, counted as
// a worst case, its tokens at the dearest prices (every prompt token at the dearest of the input and cache
// prices).
func (dr *door) cost(r reading) float64 {
	if r.worst {
		d := dr.dearest
		in := max(d.Input, d.CacheWrite, d.CacheRead)
		if dr.vendor == Anthropic {
			in = max(in, hourWritePrice(d))
		}
		return (float64(r.Input)*in + float64(r.Output)*d.Output) / 1e6
	}
	if r.Tokens == (Tokens{}) && r.calls == [len(ServerTools)]int{} {
		return 0
	}
	p, _, _ := dr.prices.For(r.model)
	c := p.Cost(r.Tokens)
	// The cache writes for an hour, which Cost priced as five minutes' ones.
	c += float64(r.hourWrites) * (hourWritePrice(p) - p.CacheWrite) / 1e6
	for i, n := range r.calls {
		c += float64(n) * p.Calls[ServerTools[i]] / 1000
	}
	return c
}

// hourWritePrice is what Anthropic bills a prompt token written to its cache for an hour: twice the input
// price (a five minutes' write is 1.25 times), or the price's own write price if that is dearer.
func hourWritePrice(p Price) float64 { return max(2*p.Input, p.CacheWrite) }
