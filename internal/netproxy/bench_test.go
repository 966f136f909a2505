package netproxy

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
)

// What the proxy adds: a connection through a CONNECT tunnel against one made directly, and a MiB
// through the tunnel against a MiB directly, to an echo server on loopback. README's cost section quotes
// the difference.
//
//	go test -run '^$' -bench . ./internal/netproxy/
func BenchmarkConnection(b *testing.B) {
	echo := newEcho(b)
	target := fmt.Sprintf("registry.test:%d", echo.port())
	p := startProxy(b, Options{Allow: []string{target}, Hosts: map[string][]netip.Addr{"registry.test": loopback}})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", echo.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			roundTrip(b, c, 1)
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		for b.Loop() {
			_, c := connectVia(b, p.URL(), target)
			if c == nil {
				b.Fatal("refused")
			}
			roundTrip(b, c, 1)
			c.Close()
		}
	})
}

func BenchmarkMiB(b *testing.B) {
	echo := newEcho(b)
	target := fmt.Sprintf("registry.test:%d", echo.port())
	p := startProxy(b, Options{Allow: []string{target}, Hosts: map[string][]netip.Addr{"registry.test": loopback}})
	const mib = 1 << 20
	b.Run("direct", func(b *testing.B) {
		c, err := net.Dial("tcp", echo.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.SetBytes(mib)
		for b.Loop() {
			roundTrip(b, c, mib)
		}
	})
	b.Run("proxy", func(b *testing.B) {
		_, c := connectVia(b, p.URL(), target)
		if c == nil {
			b.Fatal("refused")
		}
		defer c.Close()
		b.SetBytes(mib)
		for b.Loop() {
			roundTrip(b, c, mib)
		}
	})
}

// roundTrip sends n bytes and reads them back.
func roundTrip(b *testing.B, c net.Conn, n int) {
	buf := make([]byte, n)
	go func() { _, _ = c.Write(buf) }()
	if _, err := io.ReadFull(c, buf); err != nil {
		b.Fatal(err)
	}
}
