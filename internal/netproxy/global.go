package netproxy

import (
	"encoding/binary"
	"net/netip"
)

// The proxy dials, for a name, only global unicast addresses: a name on the allow-list is a public
// service, and what its DNS answers is not ralph's to trust (it may point at the runner's network, a
// cloud's metadata service, or the proxy's own host). An address that is not global is dialed only when
// the allow-list names that address itself.

// notGlobal4 are the IPv4 ranges that are not global unicast (IANA's special-purpose registry, multicast and
// reserved), and the metadata services of clouds that sit at an address that is.
var notGlobal4 = prefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // shared (CGNAT); Alibaba's metadata service is 100.100.100.200
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local; most clouds' metadata service is 169.254.169.254
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments; Oracle's metadata service is 192.0.0.192
	"192.0.2.0/24",       // documentation
	"192.31.196.0/24",    // AS112
	"192.52.193.0/24",    // AMT
	"192.88.99.0/24",     // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",     // private
	"192.175.48.0/24",    // AS112 direct delegation
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation
	"203.0.113.0/24",     // documentation
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, and the broadcast address
	"168.63.129.16/32",   // Azure's WireServer and DNS
	"100.100.100.200/32", // Alibaba Cloud's metadata service (in the shared range too)
)

// global6 is the IPv6 global unicast space; notGlobal6 are the ranges within it that are not global, or
// that embed an IPv4 address another way (checked below).
var (
	global6    = netip.MustParsePrefix("2000::/3")
	notGlobal6 = prefixes(
		"2001::/23",     // IETF protocol assignments (Teredo, 2001::/32, is checked by what it embeds)
		"2001:db8::/32", // documentation
		"3fff::/20",     // documentation
		"5f00::/16",     // segment routing SIDs
	)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	compatible = netip.MustParsePrefix("::/96")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Global says whether a is a global unicast address in every form it takes: an IPv4 address mapped into
// IPv6 or embedded in a NAT64, 6to4 or Teredo address is global only when the IPv4 address is.
func Global(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("")
	if a.Is4In6() {
		return global4(a.Unmap())
	}
	if a.Is4() {
		return global4(a)
	}
	b := a.As16()
	switch {
	case nat64.Contains(a) || compatible.Contains(a):
		// NAT64's well-known prefix reaches the IPv4 address in its last 32 bits; an IPv4-compatible
		// address (deprecated, and "::" and "::1" among them) is the IPv4 address.
		return !compatible.Contains(a) && global4(netip.AddrFrom4([4]byte(b[12:16])))
	case nat64Local.Contains(a):
		return false // local-use NAT64: a network's own translator, to whatever it translates
	case sixToFour.Contains(a):
		return global4(netip.AddrFrom4([4]byte(b[2:6])))
	case teredo.Contains(a):
		// The Teredo server's address, and the client's (its bits inverted).
		var client [4]byte
		binary.BigEndian.PutUint32(client[:], ^binary.BigEndian.Uint32(b[12:16]))
		return global4(netip.AddrFrom4([4]byte(b[4:8]))) && global4(netip.AddrFrom4(client))
	case !global6.Contains(a):
		return false // loopback, unspecified, ULA, link-local, site-local, multicast, discard, reserved
	}
	for _, p := range notGlobal6 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func global4(a netip.Addr) bool {
	for _, p := range notGlobal4 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
