package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/sandbox/sandboxtest"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Where ralph holds CAP_NET_ADMIN, the owner-match rule holds the agent's uid to ralph's ports on the
// loopback address: another port, another address on ralph's port (which Landlock's port rules let
// through), UDP over IPv4 and IPv6 are all refused; root is not held; once the rule is removed, or the
// ralph that made it is killed, the agent's uid reaches everything again. Each outcome is what the
// listeners received, not what the probe says. It all happens in a network namespace of its own: the
// machine's firewall is never touched.
func TestFirewallOwnerMatch(t *testing.T) {
	t.Parallel()
	needRoot(t)
	uid, _ := reservedIDs(t)
	cmd := exec.Command(helper)
	cmd.Env = []string{helperEnv + "=firewall", "PATH=/usr/bin:/bin", "AGENT_UID=" + strconv.Itoa(uid)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Fatalf("the helper failed: %v\n%s%s", err, out, ee.Stderr)
	case err != nil:
		t.Skipf("needs a network namespace of its own (clone(CLONE_NEWNET)): %v", err)
	}
	if why, ok := strings.CutPrefix(string(out), "skip: "); ok {
		t.Skipf("needs nftables with owned tables and CAP_NET_ADMIN: %s", strings.TrimSpace(why))
	}
	var got map[string][]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the helper said %q: %v", out, err)
	}
	all := got["all"]
	allowed := slices.DeleteFunc(slices.Clone(all), func(l string) bool { return !strings.HasPrefix(l, "ralph-") })
	want := map[string][]string{
		"all":     all,
		"before":  all,     // no rule yet
		"agent":   allowed, // the rule in force
		"root":    all,     // root is not held
		"after":   all,     // removed
		"crashed": all,     // a ralph killed with its rule in force left nothing behind
		"twice":   {"refused"},
		// another process's deletion
		"foreign delete": {"refused"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what reached the listeners, per phase (-want +got):\n%s", diff)
	}
}

// fwListener is a listener of firewallHelper, named for what it is to the agent: "ralph-…" are ralph's
// proxy and gateway, on loopback.
type fwListener struct {
	name, network, addr string
}

// firewallHelper runs TestFirewallOwnerMatch's phases in the network namespace it was started in, and
// prints, as JSON, which listeners each phase's probe reached; "skip: why" when nftables cannot be used.
func firewallHelper() int {
	uid, err := strconv.Atoi(os.Getenv("AGENT_UID"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "AGENT_UID:", err)
		return 1
	}
	// The helper runs as a program of its own: it starts itself for the probe and the killed ralph.
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	helper = self
	if err := sandboxtest.LoopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, "bringing lo up:", err)
		return 1
	}
	if ok, why := FirewallSupport(nil); !ok {
		fmt.Println("skip:", why)
		return 0
	}
	reached := map[string]bool{}
	var mu sync.Mutex
	note := func(name string) {
		mu.Lock()
		reached[name] = true
		mu.Unlock()
	}
	// ralph's proxy's port, on 127.0.0.1 and ::1, and on 127.0.0.2: another address, the same port.
	proxy, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	proxy.Close()
	port := strconv.Itoa(tcpPort(proxy))
	listeners := []fwListener{
		{"ralph-proxy4", "tcp4", "127.0.0.1:" + port},
		{"ralph-proxy6", "tcp6", "[::1]:" + port},
		{"ralph-gateway4", "tcp4", "127.0.0.1:0"},
		{"another-address-ralph-port", "tcp4", "127.0.0.2:" + port},
		{"other-port4", "tcp4", "127.0.0.1:0"},
		{"other-port6", "tcp6", "[::1]:0"},
		{"udp4", "udp4", "127.0.0.1:0"},
		{"udp6", "udp6", "[::1]:0"},
	}
	var all, targets, ports []string
	for _, l := range listeners {
		addr, err := fwServe(l, note)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s on %s: %v\n", l.name, l.addr, err)
			return 1
		}
		all = append(all, l.name)
		targets = append(targets, l.network+" "+addr)
		if strings.HasPrefix(l.name, "ralph-") {
			_, p, _ := net.SplitHostPort(addr)
			ports = append(ports, p)
		}
	}
	var allowed []int
	for _, p := range slices.Compact(slices.Sorted(slices.Values(ports))) {
		n, _ := strconv.Atoi(p)
		allowed = append(allowed, n)
	}
	slices.Sort(all)
	got := map[string][]string{"all": all}
	phase := func(name string, probe func() error) bool {
		if err := probe(); err != nil {
			fmt.Fprintf(os.Stderr, "phase %s: %v\n", name, err)
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		got[name] = []string{}
		for l := range reached {
			got[name] = append(got[name], l)
		}
		slices.Sort(got[name])
		clear(reached)
		return true
	}
	asAgent := func() error { return fwProbeAs(uid, targets) }
	asRoot := func() error { fwProbe(targets); return nil }
	b := &Boundary{net: true, separate: true, netOwner: true, uid: uid, gid: uid, netPorts: allowed}
	if !phase("before", asAgent) {
		return 1
	}
	fw, err := b.Firewall()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Firewall:", err)
		return 1
	}
	if fw == nil {
		fmt.Fprintln(os.Stderr, "Firewall installed nothing")
		return 1
	}
	// A second rule for the same uid is refused, not stacked.
	got["twice"] = []string{"installed"}
	if fw2, err := b.Firewall(); err != nil {
		got["twice"] = []string{"refused"}
	} else {
		fw2.Close()
	}
	// Another process, root in the namespace, cannot remove it: the table is the owner socket's.
	got["foreign delete"] = []string{"removed"}
	if conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil); err == nil {
		if err := (&Firewall{conn: conn, table: fw.Table()}).Close(); err != nil {
			got["foreign delete"] = []string{"refused"}
		}
	}
	if !phase("agent", asAgent) || !phase("root", asRoot) {
		return 1
	}
	if err := fw.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "Close:", err)
		return 1
	}
	if !phase("after", asAgent) {
		return 1
	}
	// A ralph killed while its rule is in force.
	crash := exec.Command(helper)
	crash.Env = []string{helperEnv + "=firewall-install", "AGENT_UID=" + strconv.Itoa(uid), "PORTS=" + strings.Join(ports, ",")}
	crash.Stderr = os.Stderr
	stdout, _ := crash.StdoutPipe()
	if err := crash.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	_ = crash.Process.Kill()
	_ = crash.Wait()
	if line != "installed\n" {
		fmt.Fprintf(os.Stderr, "the killed ralph said %q\n", line)
		return 1
	}
	if !phase("crashed", asAgent) {
		return 1
	}
	b2, _ := json.Marshal(got)
	fmt.Println(string(b2))
	return 0
}

// firewallInstallHelper installs the rule for $AGENT_UID and $PORTS, says so, and waits to be killed.
func firewallInstallHelper() int {
	uid, _ := strconv.Atoi(os.Getenv("AGENT_UID"))
	var ports []int
	for _, p := range strings.Split(os.Getenv("PORTS"), ",") {
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
	}
	if _, err := (&Boundary{net: true, separate: true, netOwner: true, uid: uid, netPorts: ports}).Firewall(); err != nil {
		fmt.Println("Firewall:", err)
		return 1
	}
	fmt.Println("installed")
	time.Sleep(time.Minute)
	return 0
}

// fwServe serves l: whatever reaches it is noted under its name, and answered, so that the probe knows
// when it is noted. It returns the address it listens on.
func fwServe(l fwListener, note func(string)) (string, error) {
	if strings.HasPrefix(l.network, "udp") {
		pc, err := net.ListenPacket(l.network, l.addr)
		if err != nil {
			return "", err
		}
		go func() {
			buf := make([]byte, 64)
			for {
				_, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				note(l.name)
				_, _ = pc.WriteTo([]byte("k"), from)
			}
		}()
		return pc.LocalAddr().String(), nil
	}
	ln, err := net.Listen(l.network, l.addr)
	if err != nil {
		return "", err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			note(l.name)
			_, _ = c.Write([]byte("k"))
			c.Close()
		}
	}()
	return ln.Addr().String(), nil
}

// fwProbeAs runs fwProbe as uid, in a process of its own.
func fwProbeAs(uid int, targets []string) error {
	cmd := exec.Command(helper)
	cmd.Env = []string{helperEnv + "=firewall-probe", "TARGETS=" + strings.Join(targets, ";")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// fwProbe reaches for every target ("network address"): it sends a byte and waits for the answer.
func fwProbe(targets []string) {
	var wg sync.WaitGroup
	for _, t := range targets {
		network, addr, _ := strings.Cut(t, " ")
		wg.Go(func() {
			c, err := net.DialTimeout(network, addr, 3*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 1))
		})
	}
	wg.Wait()
}

// Nothing is installed where there is nothing to hold or ralph cannot hold it: then Firewall does not
// touch nftables at all.
func TestFirewallNotInstalled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    Boundary
	}{
		{"network open", Boundary{separate: true, uid: AgentUID, netOwner: true}},
		{"the agent is ralph's user", Boundary{net: true, netOwner: true}},
		{"no CAP_NET_ADMIN", Boundary{net: true, separate: true, uid: AgentUID, netOwnerWhy: "ralph lacks CAP_NET_ADMIN here"}},
	}
	for _, tt := range tests {
		fw, err := tt.b.Firewall()
		if fw != nil || err != nil {
			t.Errorf("%s: Firewall() = %v, %v; want nil, nil", tt.name, fw, err)
		}
	}
}

func TestReleaseAtLeast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		release string
		want    bool
	}{
		{"5.12.0", true},
		{"6.8.0-1017-azure", true},
		{"5.11.22", false},
		{"4.19.0-25-amd64", false},
		{"5.15rc1", true},
		{"6.1-rc1", true},
		{"5.1-rc1", false},
		{"garbage", false},
	}
	for _, tt := range tests {
		if got := releaseAtLeast(tt.release, ownedTablesRelease); got != tt.want {
			t.Errorf("releaseAtLeast(%q) = %v, want %v", tt.release, got, tt.want)
		}
	}
}
