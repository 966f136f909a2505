package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The owner-match rule: where ralph holds CAP_NET_ADMIN (a job container that grants NET_ADMIN, a
// self-hosted runner), an nftables table of ralph's own, for one run of the agent or of a verify command,
// holds every packet a socket of the agent's uid sends to ralph's proxy and gateway ports on the loopback
// address (127.0.0.1 and ::1). Everything else the uid sends is refused: a TCP connection is reset, any
// other packet (UDP, ICMP, every other protocol) dropped, which fails the send at once. Landlock's port rules
// let the agent connect to those ports on any address; this rule is what refuses another host on them.
//
// The table is owned (NFT_TABLE_F_OWNER, Linux 5.12): the kernel removes it when the netlink socket that
// made it closes, so a ralph that crashed or was killed leaves nothing behind, and no other process, the
// agent least of all, can change it. It is named for the agent's uid, which no two ralphs on one host share
// (ReserveIDs).

// nfAccept is NF_ACCEPT, the chain's policy: what the rules do not refuse passes.
const nfAccept = 1

// nftTableFlagOwner is NFT_TABLE_F_OWNER: the table lives as long as the netlink socket that made it.
const nftTableFlagOwner = 0x2

// firewallTablePrefix starts the name of every table ralph makes; the agent's uid follows.
const firewallTablePrefix = "ralph-agent-"

// ownedTablesRelease is the first Linux release with owned tables.
var ownedTablesRelease = [2]int{5, 12}

// Firewall is the owner-match rule of one run of the agent, in force until Close.
type Firewall struct {
	mu    sync.Mutex
	conn  *netlink.Conn
	table string
}

// FirewallSupport says whether ralph can hold the agent's uid to its ports with an owner-match rule here,
// and why not: it asks nftables for its generation, which changes nothing and needs CAP_NET_ADMIN in this
// network namespace, and reads the kernel's release for owned tables. EnvFirewall=off in ralph's
// environment (getenv; nil: an empty one) turns the rule off.
func FirewallSupport(getenv func(key string) string) (ok bool, why string) {
	if getenv != nil && getenv(EnvFirewall) == "off" {
		return false, "turned off by " + EnvFirewall + "=off in ralph's environment"
	}
	return firewallSupport()
}

var firewallSupport = sync.OnceValues(func() (bool, string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		release := unix.ByteSliceToString(u.Release[:])
		if !releaseAtLeast(release, ownedTablesRelease) {
			return false, fmt.Sprintf("Linux %s; the rule needs Linux %d.%d", release, ownedTablesRelease[0], ownedTablesRelease[1])
		}
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return false, fmt.Sprintf("no netfilter netlink socket: %v", err)
	}
	defer conn.Close()
	_, err = conn.Execute(netlink.Message{
		Header: netlink.Header{Type: nftType(unix.NFT_MSG_GETGEN), Flags: netlink.Request | netlink.Acknowledge},
		Data:   nfgenmsg(unix.AF_UNSPEC),
	})
	switch {
	case errors.Is(err, syscall.EPERM):
		return false, "ralph lacks CAP_NET_ADMIN here"
	case err != nil:
		return false, fmt.Sprintf("nftables: %v", err)
	}
	return true, ""
})

// releaseAtLeast says whether a kernel release ("6.8.0-1017-azure") is at least min.
func releaseAtLeast(release string, min [2]int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }) // "1-rc1"
	if digits < 0 {
		digits = len(parts[1])
	}
	minor, err2 := strconv.Atoi(parts[1][:digits])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > min[0] || major == min[0] && minor >= min[1]
}

// Firewall installs the owner-match rule for one run of the agent: packets of the agent's uid go only to
// the boundary's ports on 127.0.0.1 and ::1. It returns nil and no error where there is nothing to hold
// (the network is open, or the agent runs as ralph's user) or ralph cannot hold it here (FirewallSupport,
// which Describe says once), and an error where installing it failed; the agent's other rules (Landlock,
// the socket filter) hold either way. Close removes it.
func (b *Boundary) Firewall() (*Firewall, error) {
	if !b.net || !b.separate || !b.netOwner {
		return nil, nil
	}
	return installFirewall(b.uid, b.netPorts)
}

// installFirewall makes the table for uid and ports in the calling process's network namespace.
func installFirewall(uid int, ports []int) (*Firewall, error) {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, fmt.Errorf("opening nftables: %w", err)
	}
	f := &Firewall{conn: conn, table: firewallTablePrefix + strconv.Itoa(uid)}
	msgs, err := firewallMessages(f.table, uint32(uid), ports)
	if err == nil {
		err = f.apply(msgs)
	}
	if err != nil {
		_ = conn.Close()
		if errors.Is(err, syscall.EEXIST) {
			return nil, fmt.Errorf("installing the owner-match rule: table %s exists: another ralph runs an agent as uid %d", f.table, uid)
		}
		return nil, fmt.Errorf("installing the owner-match rule: %w", err)
	}
	return f, nil
}

// Table is the name of the rule's nftables table (inet family).
func (f *Firewall) Table() string { return f.table }

// Close removes the rule. It is safe on nil and more than once; were the deletion to fail, closing the
// socket that owns the table removes it all the same.
func (f *Firewall) Close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		return nil
	}
	err := f.apply([]netlink.Message{{
		Header: netlink.Header{Type: nftType(unix.NFT_MSG_DELTABLE), Flags: netlink.Request | netlink.Acknowledge},
		Data:   append(nfgenmsg(unix.NFPROTO_INET), mustAttrs(netlink.Attribute{Type: unix.NFTA_TABLE_NAME, Data: cstring(f.table)})...),
	}})
	if cerr := f.conn.Close(); err == nil {
		err = cerr
	}
	f.conn = nil
	return err
}

// apply sends msgs as one nftables transaction, which the kernel applies whole or not at all, and reads
// an acknowledgement for each.
func (f *Firewall) apply(msgs []netlink.Message) error {
	batch := make([]netlink.Message, 0, len(msgs)+2)
	batch = append(batch, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_BEGIN), Flags: netlink.Request},
		Data:   batchHeader(),
	})
	batch = append(batch, msgs...)
	batch = append(batch, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_END), Flags: netlink.Request},
		Data:   batchHeader(),
	})
	if _, err := f.conn.SendMessages(batch); err != nil {
		return err
	}
	for acked := 0; acked < len(msgs); {
		replies, err := f.conn.Receive()
		if err != nil {
			return err
		}
		for _, m := range replies {
			if m.Header.Type == netlink.Error {
				acked++
			}
		}
	}
	return nil
}

// firewallMessages are the table, its output chain and its rules: per port, accept TCP from uid to
// 127.0.0.1 and to ::1 on it; then reset any other TCP connection of uid, and drop any other packet of it.
func firewallMessages(table string, uid uint32, ports []int) ([]netlink.Message, error) {
	const chain = "output"
	hook := mustAttrs(
		netlink.Attribute{Type: unix.NFTA_HOOK_HOOKNUM, Data: be32(unix.NF_INET_LOCAL_OUT)},
		netlink.Attribute{Type: unix.NFTA_HOOK_PRIORITY, Data: be32(0)},
	)
	msgs := []netlink.Message{
		{
			Header: netlink.Header{Type: nftType(unix.NFT_MSG_NEWTABLE), Flags: netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl},
			Data: append(nfgenmsg(unix.NFPROTO_INET), mustAttrs(
				netlink.Attribute{Type: unix.NFTA_TABLE_NAME, Data: cstring(table)},
				netlink.Attribute{Type: unix.NFTA_TABLE_FLAGS, Data: be32(nftTableFlagOwner)},
			)...),
		},
		{
			Header: netlink.Header{Type: nftType(unix.NFT_MSG_NEWCHAIN), Flags: netlink.Request | netlink.Acknowledge | netlink.Create},
			Data: append(nfgenmsg(unix.NFPROTO_INET), mustAttrs(
				netlink.Attribute{Type: unix.NFTA_CHAIN_TABLE, Data: cstring(table)},
				netlink.Attribute{Type: unix.NFTA_CHAIN_NAME, Data: cstring(chain)},
				netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_CHAIN_HOOK, Data: hook},
				netlink.Attribute{Type: unix.NFTA_CHAIN_POLICY, Data: be32(nfAccept)},
				netlink.Attribute{Type: unix.NFTA_CHAIN_TYPE, Data: cstring("filter")},
			)...),
		},
	}
	owner := []expr.Any{
		&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.NativeEndian.AppendUint32(nil, uid)},
	}
	var rules [][]expr.Any
	for _, p := range ports {
		for _, dst := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()} {
			family, offset := byte(unix.NFPROTO_IPV4), uint32(16) // the IPv4 header's destination
			if dst.Is6() {
				family, offset = unix.NFPROTO_IPV6, 24
			}
			rule := append(append([]expr.Any{}, owner...),
				&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{family}},
				&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: uint32(dst.BitLen() / 8)},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: dst.AsSlice()},
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}, // the TCP destination port
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, uint16(p))},
				&expr.Verdict{Kind: expr.VerdictAccept},
			)
			rules = append(rules, rule)
		}
	}
	rules = append(rules,
		append(append([]expr.Any{}, owner...),
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
			&expr.Reject{Type: unix.NFT_REJECT_TCP_RST},
		),
		append(append([]expr.Any{}, owner...), &expr.Verdict{Kind: expr.VerdictDrop}),
	)
	for _, r := range rules {
		var list []netlink.Attribute
		for _, e := range r {
			b, err := expr.Marshal(unix.NFPROTO_INET, e)
			if err != nil {
				return nil, err
			}
			list = append(list, netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_LIST_ELEM, Data: b})
		}
		exprs, err := netlink.MarshalAttributes(list)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, netlink.Message{
			Header: netlink.Header{Type: nftType(unix.NFT_MSG_NEWRULE), Flags: netlink.Request | netlink.Acknowledge | netlink.Create | unix.NLM_F_APPEND},
			Data: append(nfgenmsg(unix.NFPROTO_INET), mustAttrs(
				netlink.Attribute{Type: unix.NFTA_RULE_TABLE, Data: cstring(table)},
				netlink.Attribute{Type: unix.NFTA_RULE_CHAIN, Data: cstring(chain)},
				netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_RULE_EXPRESSIONS, Data: exprs},
			)...),
		})
	}
	return msgs, nil
}

// nftType is the netlink message type of an nftables message.
func nftType(msg int) netlink.HeaderType {
	return netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | msg)
}

// nfgenmsg is the header every nftables message starts with: family, version, resource id.
func nfgenmsg(family int) []byte { return []byte{byte(family), unix.NFNETLINK_V0, 0, 0} }

// batchHeader is the header of a transaction's start and end: the resource id is the subsystem.
func batchHeader() []byte {
	return binary.BigEndian.AppendUint16([]byte{unix.AF_UNSPEC, unix.NFNETLINK_V0}, unix.NFNL_SUBSYS_NFTABLES)
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func cstring(s string) []byte { return append([]byte(s), 0) }

// mustAttrs encodes attributes that cannot fail to encode: each is well under netlink's size limit.
func mustAttrs(attrs ...netlink.Attribute) []byte {
	b, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		panic(err)
	}
	return b
}
