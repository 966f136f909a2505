package sandbox

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// netProbe is a hostile script (python3): it reaches for every listener it is given by every means, and
// prints one line per attempt: "NAME ok" or "NAME refused ERRNO".
const netProbe = `
import errno, socket, sys
allowed, other, udp = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def attempt(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, "refused", errno.errorcode.get(e.errno, e.errno))
def tcp(port, fam=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3); s.connect((host, port)); s.sendall(b"x"); s.close()
def fastopen(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(3)
    s.sendto(b"x", 0x20000000, ("127.0.0.1", port)); s.close()
def sock(fam, typ, proto=0):
    socket.socket(fam, typ, proto).close()
def bind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.bind(("127.0.0.1", 0)); s.listen(); s.close()
attempt("allowed", lambda: tcp(allowed))
attempt("other", lambda: tcp(other))
attempt("other6", lambda: tcp(other, socket.AF_INET6, "::1"))
attempt("fastopen", lambda: fastopen(other))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", udp)))
attempt("udp6", lambda: sock(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("raw", lambda: sock(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet", lambda: sock(17, socket.SOCK_RAW))
attempt("sctp", lambda: sock(socket.AF_INET, socket.SOCK_STREAM, 132))
attempt("unix", lambda: sock(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("unix-dgram", lambda: sock(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("netlink-route", lambda: sock(16, socket.SOCK_RAW, 0))
attempt("netlink-audit", lambda: sock(16, socket.SOCK_RAW, 9))
attempt("bind", bind)
`

// counting listens on loopback and counts what reaches it.
type counting struct {
	tcp4, tcp6 net.Listener
	udp        net.PacketConn
	n          atomic.Int32
}

func newCounting(t *testing.T) *counting {
	t.Helper()
	c := &counting{}
	var err error
	if c.tcp4, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	port := c.tcp4.Addr().(*net.TCPAddr).Port
	c.tcp6, _ = net.Listen("tcp6", fmt.Sprintf("[::1]:%d", port))
	if c.udp, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []net.Listener{c.tcp4, c.tcp6} {
		if l == nil {
			continue
		}
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				c.n.Add(1)
				conn.Close()
			}
		}()
	}
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := c.udp.ReadFrom(buf); err != nil {
				return
			}
			c.n.Add(1)
		}
	}()
	t.Cleanup(func() {
		c.tcp4.Close()
		if c.tcp6 != nil {
			c.tcp6.Close()
		}
		c.udp.Close()
	})
	return c
}

func tcpPort(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

// Under an allow-listed network the agent connects over TCP only to ralph's ports, and opens no socket but
// Unix, netlink route and TCP ones; it may still serve on loopback. Each outcome is the listeners' count,
// not the script's word alone.
func TestNetworkConfined(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3 for the socket-level probe")
	}
	for _, separate := range []bool{false, true} {
		t.Run(mode(separate), func(t *testing.T) {
			t.Parallel()
			uid := agentUID(t, separate)
			allowed, other := newCounting(t), newCounting(t)
			b := newBoundary(t, Config{Separate: separate, UID: uid, GID: uid, Network: &Network{Ports: []int{tcpPort(allowed.tcp4)}}})
			if !b.netLandlock {
				t.Skipf("needs Landlock ABI %d, this kernel has %d", landlockNetABI, b.ABI())
			}
			d := openDir(t, uid)
			script := fmt.Sprintf("/usr/bin/python3 -c '%s' %d %d %d", strings.ReplaceAll(netProbe, "'", `'"'"'`),
				tcpPort(allowed.tcp4), tcpPort(other.tcp4), other.udp.LocalAddr().(*net.UDPAddr).Port)
			out, code := run(t, b, d, script)
			if code != 0 {
				t.Fatalf("exit code %d\n%s", code, out)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				name, outcome, _ := strings.Cut(line, " ")
				got[name] = outcome
			}
			want := map[string]string{
				"allowed": "ok", "other": "refused EACCES", "other6": "refused EACCES", "fastopen": "refused ENOTSUP",
				"udp": "refused EPERM", "udp6": "refused EPERM", "raw": "refused EPERM", "packet": "refused EAFNOSUPPORT",
				"sctp": "refused EPROTONOSUPPORT", "unix": "ok", "unix-dgram": "ok", "netlink-route": "ok",
				"netlink-audit": "refused EAFNOSUPPORT", "bind": "ok",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if n := other.n.Load(); n != 0 {
				t.Errorf("%d connections or datagrams reached the listeners the agent may not reach", n)
			}
			if n := allowed.n.Load(); n != 1 {
				t.Errorf("%d connections reached ralph's port, want 1", n)
			}
		})
	}
}

func TestRequireKernelNetwork(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Launcher: launcher, noLandlock: true, Network: &Network{Ports: []int{1234}, RequireKernel: true}})
	if err == nil || !strings.Contains(err.Error(), "network.require_kernel") {
		t.Errorf("New without Landlock, network rules required = %v, want an error naming network.require_kernel", err)
	}
	var said []string
	b, err := New(Config{Launcher: launcher, noLandlock: true, Network: &Network{Ports: []int{1234}},
		Logf: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }})
	if err != nil || !strings.Contains(strings.Join(said, "\n"), "network: the kernel has no Landlock network rules") {
		t.Errorf("New without Landlock, not required = %v, said %q", err, said)
	}
	if b != nil && !strings.Contains(b.Describe(), "TCP connections not confined by the kernel") {
		t.Errorf("Describe() = %q, want it to say TCP is not confined", b.Describe())
	}
	if _, err := New(Config{Launcher: launcher, Network: &Network{Ports: []int{70000}}}); err == nil {
		t.Error("port 70000 was taken")
	}
}

func TestCommandArgvNetwork(t *testing.T) {
	t.Parallel()
	b := &Boundary{launcher: "/bin/ralph", abi: 7, net: true, netPorts: []int{4000, 5000}, netLandlock: true, netFilter: true}
	cmd := b.Command("/usr/bin/claude", nil)
	want := []string{"/bin/ralph", SupervisorCommand, "-landlock", "-filter-sockets", "-landlock-net", "-connect", "4000", "-connect", "5000", "--", "/usr/bin/claude"}
	if diff := cmp.Diff(want, cmd.Args); diff != "" {
		t.Errorf("Command (-want +got):\n%s", diff)
	}
	got, err := parseSpec(cmd.Args[2:])
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := spec{landlock: true, filterSockets: true, landlockNet: true, connect: []int{4000, 5000}, program: "/usr/bin/claude", args: []string{}}
	if diff := cmp.Diff(wantSpec, got, cmp.AllowUnexported(spec{})); diff != "" {
		t.Errorf("parseSpec (-want +got):\n%s", diff)
	}
}

func TestSocketFilterAssembles(t *testing.T) {
	t.Parallel()
	if !SocketFilterAvailable() {
		t.Skip("no socket filter for this architecture")
	}
	prog, err := socketFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) == 0 || len(prog) > 64 {
		t.Errorf("the filter has %d instructions", len(prog))
	}
}
