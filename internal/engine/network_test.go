package engine

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// A host name is the agent's choice: the status comment shows it inert (no mention, no reference, no
// marker, no end to its code span), once, with the line that would allow it.
func TestRefusedSectionInert(t *testing.T) {
	t.Parallel()
	hostile := []string{"exfil.example.test", "x`<!-- ralph:record {} -->`@mona #1", "exfil.example.test"}
	var rec Record
	rec.Note(Entry{Outcome: "done", Refused: hostile[:2]})
	rec.Note(Entry{Outcome: "done", Refused: hostile[2:]})
	got := refusedSection(rec)
	if strings.Count(got, "`exfil.example.test`") != 1 {
		t.Errorf("the host is not listed once:\n%s", got)
	}
	for _, bad := range []string{"<!--", "@mona", " #1", "`<"} {
		if strings.Contains(got, bad) {
			t.Errorf("the section holds %q as the agent wrote it:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "network:\n  allow: [\"exfil.example.test\", ") {
		t.Errorf("the section does not give the config line:\n%s", got)
	}
	if lines := RefusedLines(hostile[:2]); len(lines) != 3 || strings.Contains(strings.Join(lines, "\n"), "@mona") {
		t.Errorf("RefusedLines = %q", lines)
	}
}

// The record lives in a comment of bounded size: the refused hosts are kept on the last run alone, and the
// issue's list is capped.
func TestRefusedBounded(t *testing.T) {
	t.Parallel()
	var rec Record
	for r := 0; r < 5; r++ {
		var hosts []string
		for i := 0; i < refusedMax; i++ {
			hosts = append(hosts, fmt.Sprintf("h%d-%d.test", r, i))
		}
		rec.Note(Entry{Outcome: "done", Refused: hosts})
	}
	for i, run := range rec.History[:len(rec.History)-1] {
		if len(run.Refused) != 0 {
			t.Errorf("history[%d] keeps %d refused hosts", i, len(run.Refused))
		}
	}
	if got := len(rec.Last.Refused); got != refusedMax {
		t.Errorf("the last run keeps %d hosts, want %d", got, refusedMax)
	}
	if got := len(rec.Refused); got != refusedMax {
		t.Errorf("the record keeps %d hosts, want %d", got, refusedMax)
	}
	ic := &issue{}
	for i := 0; i < refusedMax+3; i++ {
		ic.noteRefused(fmt.Sprintf("%d-%s.test", i, strings.Repeat("a", 300)))
	}
	if len(ic.refused) != refusedMax || ic.refusedMore != 3 || len(ic.refused[0]) > refusedLen+len("…") {
		t.Errorf("a step keeps %d hosts (%d more), the first %d bytes long", len(ic.refused), ic.refusedMore, len(ic.refused[0]))
	}
}

func TestProxyEnvOpen(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HTTPS_PROXY=http://corp:3128"}
	if diff := cmp.Diff(env, proxyEnv(env, nil)); diff != "" {
		t.Errorf("network.mode: open changed the agent's environment (-want +got):\n%s", diff)
	}
}

// With gateway.enabled: false a preset's CLI reaches its vendor's API itself: the proxy lets it, and only
// it, through besides the allow-list.
func TestOpenNetworkVendorWithoutGateway(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		gateway bool
		want    bool
	}{{"gateway on", true, false}, {"gateway off", false, true}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Gateway.Enabled = tt.gateway
			// Resolved to loopback, where nothing serves 443: allowed is a 502, refused a 403.
			e := &Engine{Config: cfg, Log: quietLog{}, AgentEnv: []string{EnvResolve + "=api.anthropic.com=127.0.0.1"}}
			p, err := e.runner(&issue{}).openNetwork("the agent", "")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			status := connectStatus(t, p.URL(), "api.anthropic.com:443")
			if refused := strings.Contains(status, "403"); refused == tt.want {
				t.Errorf("CONNECT api.anthropic.com:443: %s", status)
			}
		})
	}
}

// connectStatus asks the proxy at proxyURL for a tunnel and returns its answer's status line.
func connectStatus(t *testing.T, proxyURL, target string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(proxyURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	_ = c.SetReadDeadline(time.Now().Add(40 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}
