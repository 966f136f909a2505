package config

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Network is the network: section: what the agent, and the verify commands, may reach besides ralph's
// model gateway. With Mode allowlist their traffic goes through a proxy of ralph's that lets through only
// the hosts of [Network.Hosts], and the kernel refuses every other connection where it can.
type Network struct {
	// Mode is allowlist (the default) or open: the agent reaches any host, as it did before ralph had the
	// allow-list; ralph says so loudly in the log.
	Mode string // mode
	// Allow are the hosts the agent may reach besides DefaultAllow: "host" (ports 443 and 80), "*.domain"
	// (every name under domain, not domain itself, ports 443 and 80), or either with ":port" (that port only).
	Allow []string // allow
	// RequireKernel makes a kernel that cannot enforce the allow-list (no Landlock network rules, ABI 4 and
	// later) an error, reported before the issue is touched; otherwise ralph says so and goes on with the
	// proxy and the socket filter alone.
	RequireKernel bool // require_kernel
	// Registries, when set, are the package registries of DefaultAllow the agent may reach, instead of
	// all of them: an empty list none. A registry is a way out for what the agent read (a module proxy
	// fetches any path from its origin, a registry takes any name), so a private repository narrows them.
	Registries []string // registries
}

// The values of network.mode.
const (
	NetworkAllowlist = "allowlist"
	NetworkOpen      = "open"
)

// DefaultAllow are the hosts every allow-list has: the public package registries a build commonly needs,
// one ecosystem a line. Not the apt archives (the agent is not root, it installs no system package), not
// github.com (a place anyone can upload to with a token of their own).
var DefaultAllow = []string{
	"proxy.golang.org", "sum.golang.org", // Go modules and their checksum database
	"registry.npmjs.org", "registry.yarnpkg.com", // npm, yarn
	"pypi.org", "files.pythonhosted.org", // PyPI
	"crates.io", "index.crates.io", "static.crates.io", // Rust crates
	"rubygems.org", "index.rubygems.org", // RubyGems
	"repo.maven.apache.org", "repo1.maven.org", // Maven Central
	"api.nuget.org", // NuGet
}

// Hosts are the allow-list entries in force: the registries (network.registries, or all of DefaultAllow)
// and network.allow.
func (n Network) Hosts() []string {
	registries := DefaultAllow
	if n.Registries != nil {
		registries = n.Registries
	}
	return append(append([]string(nil), registries...), n.Allow...)
}

var (
	networkKeys = []string{"mode", "allow", "require_kernel", "registries"}
	hostLabel   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// CheckHostPattern says what is wrong with an entry of network.allow, or "".
func CheckHostPattern(s string) string {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "is not a host: an IPv6 address goes in brackets, such as [2001:db8::1]:8443"
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if s[end+1:] != "" && !strings.HasPrefix(s[end+1:], ":") {
			return "is not a host: only a :port may follow the brackets"
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return "is not an IPv6 address in brackets"
		}
	} else if h, p, ok := strings.Cut(s, ":"); ok {
		host, port = h, p
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return fmt.Sprintf("has port %q: a port is a number from 1 to 65535", port)
		}
	}
	if strings.HasPrefix(s, "[") {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	name := strings.TrimPrefix(host, "*.")
	if strings.Contains(name, "*") {
		return "may have a wildcard only as its first label, as in *.example.com"
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 && host != name {
		return "is a wildcard over a top-level domain: name a domain, as in *.example.com"
	}
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return "is not a host name (lowercase letters, digits, - and dots), an IP address, or *.domain"
		}
	}
	return ""
}

func (p *parser) network(n *yaml.Node, section string, nw *Network) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(networkKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, networkKeys)
	for _, f := range pairs {
		switch f.name {
		case "mode":
			nw.Mode, err = p.choice(f.value, f.path, []string{NetworkAllowlist, NetworkOpen})
		case "allow":
			nw.Allow, err = p.list(f.value, f.path, func(item *yaml.Node, key, s string) error {
				if why := CheckHostPattern(s); why != "" {
					return p.errorf(item, key, "%q %s", s, why)
				}
				return nil
			})
		case "require_kernel":
			nw.RequireKernel, err = p.boolean(f.value, f.path)
		case "registries":
			nw.Registries, err = p.list(f.value, f.path, func(item *yaml.Node, key, s string) error {
				if !slices.Contains(DefaultAllow, s) {
					return p.errorf(item, key, "%q is not one of the package registries ralph allows by default (%s); a host of your own goes in network.allow", s, strings.Join(DefaultAllow, ", "))
				}
				return nil
			})
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}
