package session

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

type quietLog struct{}

func (quietLog) Infof(string, ...any)                 {}
func (quietLog) Warnf(string, ...any)                 {}
func (quietLog) Untrusted(string) (io.Writer, func()) { return io.Discard, func() {} }

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
			s := New(Options{Config: cfg, Log: quietLog{}, BaseEnv: []string{EnvResolve + "=api.anthropic.com=127.0.0.1"}})
			p, err := s.openNetwork("the agent", "")
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
