//go:build !linux

package sandbox

// Firewall is the owner-match rule of one run of the agent; there is none outside Linux.
type Firewall struct{}

// FirewallSupport says there is no owner-match rule outside Linux.
func FirewallSupport(func(key string) string) (ok bool, why string) {
	return false, "the owner-match rule needs Linux"
}

// Firewall is nil outside Linux, where the agent never runs as another user.
func (b *Boundary) Firewall() (*Firewall, error) { return nil, nil }

// Table is the rule's table; there is none outside Linux.
func (f *Firewall) Table() string { return "" }

// Close does nothing outside Linux.
func (f *Firewall) Close() error { return nil }
