// Package netproxy is ralph's forward proxy for the agent: HTTP CONNECT and plain HTTP, on a loopback port
// of its own for one run, letting through only the hosts of an allow-list, resolving names itself, chaining
// to the runner's own proxy where there is one, and remembering every host it refused.
package netproxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Policy is a compiled allow-list. An entry is
//
//   - "host": that name (or IP address), on ports 443 and 80;
//   - "*.domain": every name under domain (not domain itself), on ports 443 and 80;
//   - either with ":port" ("host:8443", "*.domain:8443", "[2001:db8::1]:8443"): on that port only.
//
// Names match without regard to case or a trailing dot. Nothing else matches: not a parent domain, not
// another port, not an address a name resolves to.
type Policy struct {
	exact    map[string]map[int]bool // host -> ports
	suffixes []suffixRule
}

type suffixRule struct {
	domain string // ".example.com"
	ports  map[int]bool
}

// defaultPorts are the ports an entry without one allows: HTTPS and HTTP.
var defaultPorts = []int{443, 80}

// NewPolicy compiles entries; an entry that is not a host pattern is an error (the config checks them
// first, with the line).
func NewPolicy(entries []string) (*Policy, error) {
	p := &Policy{exact: map[string]map[int]bool{}}
	for _, e := range entries {
		host, port, err := splitPattern(e)
		if err != nil {
			return nil, err
		}
		ports := defaultPorts
		if port != 0 {
			ports = []int{port}
		}
		if d, ok := strings.CutPrefix(host, "*."); ok {
			r := suffixRule{domain: "." + d, ports: map[int]bool{}}
			for _, pt := range ports {
				r.ports[pt] = true
			}
			p.suffixes = append(p.suffixes, r)
			continue
		}
		if p.exact[host] == nil {
			p.exact[host] = map[int]bool{}
		}
		for _, pt := range ports {
			p.exact[host][pt] = true
		}
	}
	return p, nil
}

// splitPattern splits an allow-list entry into its normalised host and its port (0: none).
func splitPattern(e string) (host string, port int, err error) {
	host = e
	if strings.HasPrefix(e, "[") {
		end := strings.Index(e, "]")
		if end < 0 {
			return "", 0, fmt.Errorf("allow-list entry %q: unclosed [", e)
		}
		host = e[1:end]
		if rest := e[end+1:]; rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", 0, fmt.Errorf("allow-list entry %q: only a :port may follow the brackets", e)
			}
			if port, err = parsePort(p); err != nil {
				return "", 0, fmt.Errorf("allow-list entry %q: %w", e, err)
			}
		}
	} else if h, p, ok := strings.Cut(e, ":"); ok {
		host = h
		if port, err = parsePort(p); err != nil {
			return "", 0, fmt.Errorf("allow-list entry %q: %w", e, err)
		}
	}
	host = normalize(host)
	if host == "" || host == "*." {
		return "", 0, fmt.Errorf("allow-list entry %q names no host", e)
	}
	return host, port, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// normalize is a host as the policy compares it: lowercase, no trailing dot, an IP address in its
// canonical form.
func normalize(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return host
}

// Allows says whether host (a name or an IP address, without brackets) may be reached on port.
func (p *Policy) Allows(host string, port int) bool {
	host = normalize(host)
	if p.exact[host][port] {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false // a wildcard names names, not addresses
	}
	for _, r := range p.suffixes {
		if strings.HasSuffix(host, r.domain) && r.ports[port] {
			return true
		}
	}
	return false
}

// allowsHost says whether host is allowed on some port: a refusal then names host:port, not the host
// alone, so that the config line it suggests is the one that would allow it.
func (p *Policy) allowsHost(host string) bool {
	host = normalize(host)
	if len(p.exact[host]) > 0 {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	for _, r := range p.suffixes {
		if strings.HasSuffix(host, r.domain) {
			return true
		}
	}
	return false
}
