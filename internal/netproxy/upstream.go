package netproxy

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Upstream is the runner's own proxy, which ralph's proxy goes through where the runner must (a
// self-hosted runner behind a corporate proxy): the conventional HTTPS_PROXY, HTTP_PROXY and NO_PROXY of
// ralph's own environment, upper or lower case.
type Upstream struct {
	HTTPS, HTTP *url.URL // nil: none
	noProxy     []string
}

// UpstreamFromEnv reads the runner's proxy settings through getenv; a variable that is not a URL is an
// error, since traffic would otherwise go around the proxy the runner must use.
func UpstreamFromEnv(getenv func(string) string) (*Upstream, error) {
	get := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return getenv(strings.ToLower(name))
	}
	u := &Upstream{}
	for _, v := range []struct {
		name string
		to   **url.URL
	}{{"HTTPS_PROXY", &u.HTTPS}, {"HTTP_PROXY", &u.HTTP}} {
		s := get(v.name)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		p, err := url.Parse(s)
		if err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			return nil, fmt.Errorf("%s in ralph's environment is not an http(s) proxy URL", v.name)
		}
		*v.to = p
	}
	for _, e := range strings.Split(get("NO_PROXY"), ",") {
		if e = strings.TrimSpace(strings.ToLower(e)); e != "" {
			u.noProxy = append(u.noProxy, e)
		}
	}
	return u, nil
}

// For is the proxy through which ralph reaches host:port, nil for directly: HTTPS_PROXY for a tunnel
// (CONNECT), HTTP_PROXY for plain HTTP, unless NO_PROXY names the host.
func (u *Upstream) For(host string, port int, tunnel bool) *url.URL {
	if u == nil {
		return nil
	}
	p := u.HTTP
	if tunnel {
		p = u.HTTPS
	}
	if p == nil || u.bypass(host, port) {
		return nil
	}
	return p
}

// bypass applies NO_PROXY as curl and Go read it: "*" for every host; a name matches itself and every name
// under it (with or without a leading dot); an address or a CIDR block matches addresses; an entry may carry
// a port.
func (u *Upstream) bypass(host string, port int) bool {
	host = normalize(host)
	addr, addrErr := netip.ParseAddr(host)
	for _, e := range u.noProxy {
		if e == "*" {
			return true
		}
		ep := 0
		if h, p, err := net.SplitHostPort(e); err == nil {
			n, _ := strconv.Atoi(p)
			e, ep = h, n
		}
		if ep != 0 && ep != port {
			continue
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			if addrErr == nil && pfx.Contains(addr) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			if addrErr == nil && a.Unmap() == addr.Unmap() {
				return true
			}
			continue
		}
		e = strings.TrimPrefix(strings.TrimPrefix(e, "*"), ".")
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
}
