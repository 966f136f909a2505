// Package sandbox confines the agent and the verify commands, which run the agent's code, to a boundary the
// kernel enforces: another uid with no groups, reads and writes only where Landlock allows them, and nothing
// of theirs left running once they are done.
package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// AgentUID and AgentGID are the agent's ids when Config.Separate leaves them unset: high enough to belong to
// no one in the Action's container, and neither root nor 1001, which owns the runner's mounts. An agent's
// uid is always within AgentUID and AgentUID+3999 (ReserveIDs).
const (
	AgentUID = 61000
	AgentGID = 61000
)

// uidRange is how many ids after AgentUID a run may take.
const uidRange = 4000

// reaperUID is the real uid of the thread that kills the agent's processes (killUID): uidRange below the
// agent's, so that two ralphs, which never share an agent uid, never share one either, and no agent ever
// has one. ok is false for a uid outside the agent's range, which has none.
func reaperUID(uid int) (reaper int, ok bool) {
	if uid < AgentUID || uid >= AgentUID+uidRange {
		return 0, false
	}
	return uid - uidRange, true
}

// DefaultProcessLimit is the cap on the agent's processes and threads when it runs as a user of its own:
// enough for the agents' CLIs and the builds and test runs they start (a Go or Node process has a thread
// per core and more), low enough that a fork bomb stops long before the machine does.
func DefaultProcessLimit() int { return max(4096, 128*runtime.NumCPU()) }

// runnerUID owns the GitHub runner's workspace and temp mounts; an agent with that uid could write them.
const runnerUID = 1001

// SupervisorCommand is the argv[1] that makes ralph's main run [SupervisorMain] instead of the CLI.
const SupervisorCommand = "__ralph-sandbox"

// Exit codes of the supervisor when it, rather than the agent, failed.
const (
	// ExitSetup: the boundary could not be set up, and the agent was not started.
	ExitSetup = 126
	// ExitCleanup: the agent ran, but processes it left kept appearing and could not all be killed.
	ExitCleanup = 125
)

// Config is the boundary one step's agent runs in.
type Config struct {
	// Separate runs the agent as UID/GID with no supplementary groups. It needs ralph to be root (the
	// Action's container).
	Separate bool
	// UID and GID are the agent's ids when Separate; 0 means AgentUID/AgentGID. They must not be 0 or 1001
	// (1001 owns the runner's mounts), and UID must be within AgentUID and AgentUID+3999. Reap kills every
	// process of UID: two agents that run at once must not share one (ReserveIDs).
	UID, GID int
	// Writable are the directories the agent may write under Landlock: its copy of the repository, its
	// HOME, its TMPDIR. /dev/null and the like are added. The agent may read and run what is in them too.
	Writable []string
	// ReadOnly are more paths the agent may read and run but not write under Landlock, beside the system
	// directories (SystemReadable) and Writable: toolchains and caches outside those, such as a person's
	// ~/.cargo or the caches the job restored.
	ReadOnly []string
	// Home and HomeTools: when Separate and the person's home is closed to the agent's uid, the agent sees
	// in Home only HomeTools (the toolchains installed there: pyenv, nvm, rustup, asdf, mise), read-only at
	// the same paths, on an empty read-only tmpfs in the supervisor's own mount namespace; no mode or ACL
	// of the person's files changes. Writable directories under Home are shown too, writable.
	Home      string
	HomeTools []string
	// RequireLandlock makes a kernel without Landlock an error instead of a warning.
	RequireLandlock bool
	// Network confines the agent's network to ralph's ports (network.mode: allowlist); nil leaves it open.
	Network *Network
	// ReapDescendants makes Reap, when not Separate, kill every process descended from ralph that is
	// still running, which is what catches the agent's orphans once Prepare made ralph their subreaper.
	// Only a whole program that runs nothing else at the time (ralph's doors) may set it: inside a test
	// binary it would kill the other tests' processes.
	ReapDescendants bool
	// ProcessLimit caps the processes (threads included) of the agent's uid when Separate, through
	// RLIMIT_NPROC; 0 means DefaultProcessLimit().
	ProcessLimit int
	// Launcher is ralph's own executable, run as the supervisor; "" means os.Executable().
	Launcher string
	// Getenv reads ralph's own environment, where EnvFirewall=off turns the owner-match rule off; nil:
	// an empty one.
	Getenv func(key string) string
	// Logf is where whether Landlock is in force is said, once; nil says nothing.
	Logf func(format string, args ...any)

	// noLandlock pretends the kernel has no Landlock, for tests.
	noLandlock bool
}

// Network is the agent's network under an allow-list: TCP connections only to Ports, on any address, where
// the kernel has Landlock's network rules (ABI 4); everywhere, a socket filter (seccomp) that refuses every
// socket but Unix, netlink route and TCP ones.
type Network struct {
	// Ports are the TCP ports the agent may connect to: ralph's network proxy's and model gateway's.
	Ports []int
	// RequireKernel makes a kernel without Landlock's network rules an error (network.require_kernel).
	RequireKernel bool
}

// EnvFirewall is the variable of ralph's own environment that, set to "off", keeps ralph from installing
// the owner-match firewall rule (Boundary.Firewall): for a runner whose firewall ralph must not touch, and
// for tests that run on a machine's own network.
const EnvFirewall = "RALPH_NETWORK_FIREWALL"

// landlockNetABI is the first Landlock ABI with network rules.
const landlockNetABI = 4

// NetworkSupport says what this kernel and build can enforce of an allow-listed network: Landlock's
// TCP connect rules (tcp, with why not) and the socket filter (filter).
func NetworkSupport() (tcp bool, filter bool, why string) {
	abi, why := landlockABI()
	if abi > 0 && abi < landlockNetABI {
		why = fmt.Sprintf("Landlock ABI %d; network rules need ABI %d (Linux 6.7)", abi, landlockNetABI)
	}
	return abi >= landlockNetABI, SocketFilterAvailable(), why
}

// Boundary runs commands confined as its Config says.
type Boundary struct {
	net             bool  // the network is confined
	netPorts        []int // the TCP ports it may connect to
	netLandlock     bool  // Landlock enforces netPorts
	netFilter       bool  // the socket filter is installed
	netOwner        bool  // an owner-match rule holds the agent's uid to netPorts on loopback (Firewall)
	netOwnerWhy     string
	separate        bool
	uid, gid        int
	reaper          int // reaperUID(uid)
	nproc           int // the cap on the agent's processes, when separate
	writable        []string
	readOnly        []string
	reapDescendants bool
	launcher        string
	abi             int
	why             string // why there is no Landlock, when abi is 0

	// home is covered in the supervisor's mount namespace, showing homeTools read-only (Config.Home).
	home      string
	homeTools []string
}

// New checks cfg and finds out what this kernel can enforce. It does not touch the filesystem.
func New(cfg Config) (*Boundary, error) {
	b := &Boundary{separate: cfg.Separate, reapDescendants: cfg.ReapDescendants, launcher: cfg.Launcher}
	if cfg.Separate {
		if runtime.GOOS != "linux" {
			return nil, fmt.Errorf("running the agent as another user needs Linux, not %s", runtime.GOOS)
		}
		if os.Geteuid() != 0 {
			return nil, errors.New("running the agent as another user needs ralph to run as root")
		}
		b.uid, b.gid = cfg.UID, cfg.GID
		if b.uid == 0 {
			b.uid = AgentUID
		}
		if b.gid == 0 {
			b.gid = AgentGID
		}
		for _, id := range []struct {
			name string
			v    int
		}{{"uid", b.uid}, {"gid", b.gid}} {
			if id.v < 0 || id.v == runnerUID {
				return nil, fmt.Errorf("agent %s %d is not allowed (not root, not %d, which owns the runner's files)", id.name, id.v, runnerUID)
			}
		}
		var ok bool
		if b.reaper, ok = reaperUID(b.uid); !ok {
			return nil, fmt.Errorf("agent uid %d is not allowed (it must be within %d and %d)", b.uid, AgentUID, AgentUID+uidRange-1)
		}
		b.nproc = cfg.ProcessLimit
		if b.nproc <= 0 {
			b.nproc = DefaultProcessLimit()
		}
	}
	if cfg.Home != "" && len(cfg.HomeTools) > 0 {
		if !cfg.Separate || runtime.GOOS != "linux" {
			return nil, errors.New("showing the toolchains of a home to the agent needs Linux and the agent as a uid of its own")
		}
		if !filepath.IsAbs(cfg.Home) || filepath.Clean(cfg.Home) == "/" {
			return nil, fmt.Errorf("home %q is not an absolute path below /", cfg.Home)
		}
		b.home = filepath.Clean(cfg.Home)
		for _, d := range cfg.HomeTools {
			rel, err := filepath.Rel(b.home, d)
			if !filepath.IsAbs(d) || err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				return nil, fmt.Errorf("toolchain directory %q is not under the home %s", d, b.home)
			}
			b.homeTools = append(b.homeTools, filepath.Clean(d))
		}
	}
	for _, w := range cfg.Writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("writable directory %q is not an absolute path", w)
		}
		b.writable = append(b.writable, filepath.Clean(w))
	}
	for _, r := range cfg.ReadOnly {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("read-only path %q is not an absolute path", r)
		}
		b.readOnly = append(b.readOnly, filepath.Clean(r))
	}
	if b.launcher == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find ralph's executable to supervise the agent: %w", err)
		}
		b.launcher = exe
	}
	b.abi, b.why = landlockABI()
	if cfg.noLandlock {
		b.abi, b.why = 0, "turned off for a test"
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	switch {
	case b.abi > 0:
		logf("landlock: ABI %d, the agent writes only under %s and reads only those, %s", b.abi, b.writableList(), b.readableList())
	case cfg.RequireLandlock:
		return nil, fmt.Errorf("landlock is required (sandbox.require_landlock) but not available: %s", b.why)
	default:
		logf("landlock: not available (%s); the agent can write wherever its uid may", b.why)
	}
	if n := cfg.Network; n != nil {
		b.net = true
		for _, p := range n.Ports {
			if p < 1 || p > 65535 {
				return nil, fmt.Errorf("port %d is not a TCP port", p)
			}
			b.netPorts = append(b.netPorts, p)
		}
		b.netLandlock = b.abi >= landlockNetABI
		b.netFilter = SocketFilterAvailable()
		switch {
		case !b.netLandlock && n.RequireKernel:
			why := b.why
			if b.abi > 0 {
				why = fmt.Sprintf("Landlock ABI %d; network rules need ABI %d (Linux 6.7)", b.abi, landlockNetABI)
			}
			return nil, fmt.Errorf("the kernel cannot hold the agent to the network allow-list (network.require_kernel: true): no Landlock network rules here (%s)", why)
		case !b.netLandlock:
			logf("network: the kernel has no Landlock network rules here (ABI %d; they need ABI %d): the agent's TCP connections are not confined to ralph's proxy, only its other sockets are refused; set network.require_kernel: true to refuse to run so", b.abi, landlockNetABI)
		}
		if b.separate {
			b.netOwner, b.netOwnerWhy = FirewallSupport(cfg.Getenv)
		}
		if !b.netFilter {
			logf("network: no socket filter for %s/%s: the agent's UDP and raw sockets are not refused", runtime.GOOS, runtime.GOARCH)
		}
	}
	return b, nil
}

// ABI is the Landlock ABI the boundary enforces; 0 means none.
func (b *Boundary) ABI() int { return b.abi }

// Agent is the agent's uid and gid when it runs as a user of its own (ok false: it is ralph's user).
func (b *Boundary) Agent() (uid, gid int, ok bool) { return b.uid, b.gid, b.separate }

// Enforced says whether the kernel holds the agent apart at all: another uid, or Landlock.
func (b *Boundary) Enforced() bool { return b.separate || b.abi > 0 }

// Describe is the boundary in one line, for logs: as a run's preflight builds it, before any step, so the
// places each step adds (its copy of the repository, its HOME and TMPDIR) are named, not listed.
func (b *Boundary) Describe() string {
	who := "same user as ralph"
	if b.separate {
		who = fmt.Sprintf("uid %d, gid %d, no groups", b.uid, b.gid)
	}
	if b.abi == 0 {
		return fmt.Sprintf("%s; no landlock (%s), writes not confined", who, b.why) + b.describeNetwork()
	}
	s := fmt.Sprintf("%s; landlock ABI %d, writes confined to %sthe step's copy of the repository, its HOME and TMPDIR, and terminal-like devices", who, b.abi, b.writableList())
	if b.abi >= 6 {
		s += ", signals and abstract sockets confined to its own processes"
	}
	s += "; reads confined to those places, " + b.readableList()
	return s + b.describeNetwork()
}

// describeNetwork is the network part of Describe.
func (b *Boundary) describeNetwork() string {
	if !b.net {
		return "; network open"
	}
	var parts []string
	if b.netLandlock {
		ports := make([]string, len(b.netPorts))
		for i, p := range b.netPorts {
			ports[i] = strconv.Itoa(p)
		}
		if len(ports) == 0 {
			parts = append(parts, "TCP connections only to ralph's network proxy and model gateway (ports chosen per run)")
		} else {
			parts = append(parts, "TCP connections only to ralph's ports ("+strings.Join(ports, ", ")+")")
		}
	} else {
		parts = append(parts, "TCP connections not confined by the kernel (no Landlock network rules)")
	}
	if b.netFilter {
		parts = append(parts, "no UDP, raw or other sockets")
	}
	switch {
	case b.separate && b.netOwner:
		parts = append(parts, "its uid's packets only to those ports on 127.0.0.1 and ::1 (an owner-match firewall rule)")
	case b.separate:
		parts = append(parts, "no owner-match firewall rule ("+b.netOwnerWhy+"), so the kernel does not refuse a connection to another host on ralph's ports")
	}
	return "; network: " + strings.Join(parts, ", ")
}

// SystemReadable are the directories every agent may read and run under Landlock: the system's programs,
// libraries and settings, and the tool directories of a runner (/opt/hostedtoolcache). Not /home, /root,
// /tmp, /var or /run: people's files, other programs' temporary files and sockets (the Docker socket).
func SystemReadable() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc", "/proc", "/sys"}
}

// readableList is what the agent may read beside its writable places, for Describe.
func (b *Boundary) readableList() string {
	paths := append(SystemReadable(), b.readOnly...)
	return strings.Join(paths, ", ") + " and the directory of the program it runs"
}

func (b *Boundary) writableList() string {
	if len(b.writable) == 0 {
		return ""
	}
	return strings.Join(b.writable, ", ") + ", "
}

// Command is program with args, run under the boundary by the supervisor, ralph's own executable. The
// caller sets Dir, Env, Stdin, Stdout and Stderr, and signals the process group, which the supervisor and
// the agent share. The supervisor also starts a session, so the agent has no controlling terminal to push
// input into (TIOCSTI) or read from.
//
// The supervisor's argv is readable by every process: it holds no secret, only the boundary's settings.
func (b *Boundary) Command(program string, args []string) *exec.Cmd {
	argv := []string{b.launcher, SupervisorCommand}
	if b.separate {
		argv = append(argv, "-separate", "-uid", strconv.Itoa(b.uid), "-gid", strconv.Itoa(b.gid), "-nproc", strconv.Itoa(b.nproc))
	}
	if b.abi > 0 {
		argv = append(argv, "-landlock")
	}
	if b.net {
		if b.netFilter {
			argv = append(argv, "-filter-sockets")
		}
		if b.netLandlock {
			argv = append(argv, "-landlock-net")
			for _, p := range b.netPorts {
				argv = append(argv, "-connect", strconv.Itoa(p))
			}
		}
	}
	for _, w := range b.writable {
		argv = append(argv, "-writable", w)
	}
	if b.home != "" {
		argv = append(argv, "-home", b.home)
		for _, d := range b.homeTools {
			argv = append(argv, "-home-tool", d)
		}
	}
	for _, r := range b.readOnly {
		argv = append(argv, "-readable", r)
	}
	argv = append(argv, "--", program)
	argv = append(argv, args...)
	return &exec.Cmd{Path: b.launcher, Args: argv, SysProcAttr: sessionAttr()}
}

// spec is the boundary as the supervisor receives it on its command line, and the command to run in it.
type spec struct {
	separate bool
	uid, gid int
	nproc    int
	landlock bool
	writable []string
	// home is covered, in the supervisor's mount namespace, by an empty tmpfs showing homeTools read-only
	// and the writable directories under it.
	home      string
	homeTools []string
	readable  []string
	// filterSockets installs the socket filter; landlockNet confines TCP connections to connect.
	filterSockets bool
	landlockNet   bool
	connect       []int
	program       string
	args          []string
}

// parseSpec reads the arguments Command gives the supervisor.
func parseSpec(args []string) (spec, error) {
	var s spec
	fs := flag.NewFlagSet(SupervisorCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&s.separate, "separate", false, "run the command as -uid and -gid, with no groups")
	fs.IntVar(&s.uid, "uid", 0, "the command's uid")
	fs.IntVar(&s.gid, "gid", 0, "the command's gid")
	fs.IntVar(&s.nproc, "nproc", 0, "the cap on the processes of the command's uid (RLIMIT_NPROC)")
	fs.BoolVar(&s.landlock, "landlock", false, "confine writes with Landlock, or fail")
	fs.BoolVar(&s.filterSockets, "filter-sockets", false, "refuse every socket but Unix, netlink route and TCP ones (seccomp), or fail")
	fs.BoolVar(&s.landlockNet, "landlock-net", false, "confine TCP connections to the -connect ports with Landlock, or fail")
	fs.Func("connect", "a TCP port the command may connect to (repeated)", func(v string) error {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("-connect %q is not a TCP port", v)
		}
		s.connect = append(s.connect, p)
		return nil
	})
	fs.Func("writable", "a directory the command may write (repeated)", func(v string) error {
		s.writable = append(s.writable, v)
		return nil
	})
	fs.StringVar(&s.home, "home", "", "a home to cover, showing only -home-tool directories and -writable ones under it")
	fs.Func("home-tool", "a directory under -home the command may read and run from (repeated)", func(v string) error {
		s.homeTools = append(s.homeTools, v)
		return nil
	})
	fs.Func("readable", "a path the command may read and run but not write (repeated)", func(v string) error {
		s.readable = append(s.readable, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return spec{}, err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return spec{}, errors.New("no command to run")
	}
	if _, ok := reaperUID(s.uid); s.separate && (!ok || s.gid <= 0 || s.gid == runnerUID || s.nproc <= 0) {
		return spec{}, fmt.Errorf("uid %d, gid %d, process cap %d not allowed for the agent", s.uid, s.gid, s.nproc)
	}
	s.program, s.args = rest[0], rest[1:]
	return s, nil
}
