package netproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// notGlobal are addresses a public name must not lead the agent to, in every form: each is refused when an
// allowed name resolves to it.
var notGlobal = []string{
	// IPv4
	"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.100.100.200", "100.127.255.254", "127.0.0.1", "127.1.2.3",
	"169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.192", "192.0.2.1", "192.88.99.1", "192.168.1.1",
	"198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
	"255.255.255.255", "168.63.129.16",
	// IPv6
	"::", "::1", "fd00:ec2::254", "fc00::1", "fe80::1", "fe80::1%eth0", "fec0::1", "ff02::1", "ff0e::1", "100::1",
	"2001:db8::1", "3fff::1", "2001:2::1", "2001:10::1", "5f00::1", "4000::1", "::2:1",
	// IPv4 inside IPv6
	"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:100.100.100.200", "::ffff:168.63.129.16",
	"::127.0.0.1", "::10.0.0.1", "::8.8.8.8", // IPv4-compatible (deprecated)
	"64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::808:808", // NAT64
	"2002:a9fe:a9fe::1", "2002:7f00:1::", "2002:c0a8:101::1", // 6to4
	"2001:0:a9fe:a9fe:8000:63bf:f7f6:f7f7", "2001:0:4136:e378:8000:63bf:5601:fefe", // Teredo: server, client
}

// global are addresses the proxy dials for an allowed name.
var global = []string{
	"8.8.8.8", "1.1.1.1", "140.82.112.3", "100.63.255.255", "100.128.0.1", "172.32.0.1", "198.20.0.1", "223.255.255.255",
	"2606:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	"2001:0:4136:e378:8000:63bf:f7f6:f7f7", // Teredo: server 65.54.227.120, client 8.9.8.8
}

func TestGlobal(t *testing.T) {
	t.Parallel()
	for _, s := range notGlobal {
		if Global(netip.MustParseAddr(s)) {
			t.Errorf("Global(%s) = true, want false", s)
		}
	}
	for _, s := range global {
		if !Global(netip.MustParseAddr(s)) {
			t.Errorf("Global(%s) = false, want true", s)
		}
	}
	// Teredo: the client's address is stored inverted (3fff:fdd2 is 192.0.2.45, documentation).
	if Global(netip.MustParseAddr("2001:0:4136:e378:8000:63bf:3fff:fdd2")) {
		t.Errorf("a Teredo address whose client is 192.0.2.45 is global")
	}
}

// TestProxyDialsOnlyGlobal: a name on the allow-list whose DNS answers an address that is not global is
// refused, and nothing is dialed; the address the allow-list names itself is dialed; a global one is.
func TestProxyDialsOnlyGlobal(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var dialed []string
	var answer netip.Addr
	p := startProxy(t, Options{Allow: []string{"public.test", "10.0.0.7", "[fd00::7]"},
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			return []netip.Addr{answer}, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return nil, errors.New("no network in this test")
		}})
	try := func(s string) bool {
		mu.Lock()
		answer, dialed = netip.MustParseAddr(s), nil
		mu.Unlock()
		if _, c := connectVia(t, p.URL(), "public.test:443"); c != nil {
			c.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		return len(dialed) > 0
	}
	for _, s := range notGlobal {
		if try(s) {
			t.Errorf("public.test resolving to %s: dialed %v", s, dialed)
		}
	}
	for _, s := range append(global, "10.0.0.7", "fd00::7", "::ffff:10.0.0.7") {
		if !try(s) {
			t.Errorf("public.test resolving to %s: not dialed", s)
		}
	}
	got, _ := p.Refused()
	if !slices.Equal(got, []string{"public.test"}) {
		t.Errorf("refused = %v", got)
	}
}
