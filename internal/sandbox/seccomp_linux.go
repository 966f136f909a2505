package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The socket filter: a seccomp program, installed in the supervisor before it starts the command, that
// lets the command's processes open only the sockets an allow-listed network needs. Unix sockets (the
// CLIs talk to their own helpers over them), netlink's route family (runtimes read the interfaces with
// it: it reaches no other host), and TCP over IPv4 and IPv6, which Landlock's network rules then confine
// to ralph's ports. UDP (DNS included), raw and packet sockets, SCTP and every other family are refused
// with an error a program can handle, as are TCP Fast Open's data-with-the-connect (which the kernel does
// not ask Landlock about) and io_uring (whose sockets seccomp does not see). A program of another
// architecture (32-bit x86 on x86-64) is killed at its first system call: its calls are not the ones
// the filter checks.

// seccompData offsets: struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }.
// An argument's low 32 bits, on a little-endian machine, are at args[i]'s offset.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArg(i uint32) uint32 { return offArg0 + 8*i }

// The socket(2) constants the filter compares with.
const (
	sockTypeMask   = 0xf // SOCK_NONBLOCK and SOCK_CLOEXEC are flags above it
	msgFastOpen    = 0x20000000
	x32SyscallBit  = 0x40000000
	netlinkRoute   = 0
	ipprotoDefault = 0
)

// filterArch is the machine's audit architecture and whether the filter knows its system calls.
func filterArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// SocketFilterAvailable says whether this build can filter the agent's sockets here.
func SocketFilterAvailable() bool {
	_, ok := filterArch()
	return ok && runtime.GOOS == "linux"
}

// bpf is a small assembler for classic BPF: labels resolved at the end, jumps forward only.
type bpf struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string // "" : fall through
}

func (b *bpf) stmt(code uint16, k uint32) { b.prog = append(b.prog, unix.SockFilter{Code: code, K: k}) }

// jump compares the accumulator with k (code: BPF_JEQ or BPF_JGE) and goes to jt when true, jf when false.
func (b *bpf) jump(code uint16, k uint32, jt, jf string) {
	b.fixups = append(b.fixups, fixup{at: len(b.prog), jt: jt, jf: jf})
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_JMP | code | unix.BPF_K, K: k})
}

func (b *bpf) label(name string) { b.labels[name] = len(b.prog) }

func (b *bpf) load(off uint32) { b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }

func (b *bpf) ret(v uint32) { b.stmt(unix.BPF_RET|unix.BPF_K, v) }

func (b *bpf) assemble() ([]unix.SockFilter, error) {
	for _, f := range b.fixups {
		for _, j := range []struct {
			to  string
			set *uint8
		}{{f.jt, &b.prog[f.at].Jt}, {f.jf, &b.prog[f.at].Jf}} {
			if j.to == "" {
				continue
			}
			target, ok := b.labels[j.to]
			d := target - f.at - 1
			if !ok || d < 0 || d > 255 {
				return nil, fmt.Errorf("socket filter: bad jump to %q", j.to)
			}
			*j.set = uint8(d)
		}
	}
	return b.prog, nil
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | (uint32(e) & unix.SECCOMP_RET_DATA) }

// socketFilter is the filter's program.
func socketFilter() ([]unix.SockFilter, error) {
	arch, ok := filterArch()
	if !ok {
		return nil, fmt.Errorf("no socket filter for %s", runtime.GOARCH)
	}
	b := &bpf{labels: map[string]int{}}
	b.load(offArch)
	b.jump(unix.BPF_JEQ, arch, "", "kill")
	b.load(offNr)
	b.jump(unix.BPF_JGE, x32SyscallBit, "eperm", "")
	b.jump(unix.BPF_JEQ, unix.SYS_IO_URING_SETUP, "enosys", "")
	b.jump(unix.BPF_JEQ, unix.SYS_SOCKET, "socket", "")
	b.jump(unix.BPF_JEQ, unix.SYS_SENDTO, "flags3", "")
	b.jump(unix.BPF_JEQ, unix.SYS_SENDMMSG, "flags3", "")
	b.jump(unix.BPF_JEQ, unix.SYS_SENDMSG, "flags2", "allow")

	// sendto(fd, buf, len, flags, …) and sendmmsg(fd, vec, n, flags): no MSG_FASTOPEN.
	b.label("flags3")
	b.load(offArg(3))
	b.jump(unix.BPF_JSET, msgFastOpen, "eopnotsupp", "allow")
	// sendmsg(fd, msg, flags)
	b.label("flags2")
	b.load(offArg(2))
	b.jump(unix.BPF_JSET, msgFastOpen, "eopnotsupp", "allow")

	// socket(family, type, protocol)
	b.label("socket")
	b.load(offArg(0))
	b.jump(unix.BPF_JEQ, unix.AF_UNIX, "allow", "")
	b.jump(unix.BPF_JEQ, unix.AF_NETLINK, "netlink", "")
	b.jump(unix.BPF_JEQ, unix.AF_INET, "inet", "")
	b.jump(unix.BPF_JEQ, unix.AF_INET6, "inet", "eafnosupport")
	b.label("netlink")
	b.load(offArg(2))
	b.jump(unix.BPF_JEQ, netlinkRoute, "allow", "eafnosupport")
	b.label("inet")
	b.load(offArg(1))
	b.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, sockTypeMask)
	b.jump(unix.BPF_JEQ, unix.SOCK_STREAM, "", "eperm")
	b.load(offArg(2))
	b.jump(unix.BPF_JEQ, ipprotoDefault, "allow", "")
	b.jump(unix.BPF_JEQ, unix.IPPROTO_TCP, "allow", "eprotonosupport")

	b.label("allow")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("kill")
	b.ret(unix.SECCOMP_RET_KILL_PROCESS)
	b.label("eperm")
	b.ret(errno(unix.EPERM))
	b.label("enosys")
	b.ret(errno(unix.ENOSYS))
	b.label("eopnotsupp")
	b.ret(errno(unix.EOPNOTSUPP))
	b.label("eafnosupport")
	b.ret(errno(unix.EAFNOSUPPORT))
	b.label("eprotonosupport")
	b.ret(errno(unix.EPROTONOSUPPORT))
	return b.assemble()
}

// filterSockets installs the socket filter on the calling thread, which must have no new privileges
// (PR_SET_NO_NEW_PRIVS) or be privileged; the processes it starts inherit it and cannot remove it.
func filterSockets() error {
	prog, err := socketFilter()
	if err != nil {
		return err
	}
	return installFilter(prog)
}

// installFilter installs a seccomp program on the calling thread.
func installFilter(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("prctl(PR_SET_SECCOMP): the kernel has no seccomp filters: %w", err)
		}
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}

// The filter of what the kernel keeps, installed in the supervisor before every command, whatever the
// network: no add_key, request_key or keyctl, and no mq_open. The kernel keeps a uid's keyrings after
// every process of it is gone, and a POSIX message queue, with its messages, until someone removes it by
// name, so a key or a queue the agent made would outlive its step, for the uid's next command (a sweep's
// next issue runs as the same uid); as the same user, the user's own keyrings and queues hold what is not
// the agent's. Landlock refuses mq_open as a write outside the agent's places, but a kernel without
// Landlock does not, and where /dev/mqueue is not mounted (Docker's default) no one can list the queues
// to remove them. Docker's default profile refuses the keyring calls too, so the agents' CLIs already do
// without them; none uses message queues. The compat architectures' numbers are checked as well: a
// 32-bit program's keyctl is another number.

// The kept calls of the 32-bit ABIs a 64-bit kernel also runs (i386, ARM EABI): add_key, request_key,
// keyctl, mq_open.
var compatKept = map[uint32][4]uint32{
	unix.AUDIT_ARCH_I386: {286, 287, 288, 277},
	unix.AUDIT_ARCH_ARM:  {309, 310, 311, 274},
}

// keptFilter is the program of the filter of what the kernel keeps.
func keptFilter() ([]unix.SockFilter, error) {
	arch, ok := filterArch()
	if !ok {
		return nil, fmt.Errorf("no filter of keyrings and message queues for %s", runtime.GOARCH)
	}
	compat := uint32(unix.AUDIT_ARCH_I386)
	if arch == unix.AUDIT_ARCH_AARCH64 {
		compat = unix.AUDIT_ARCH_ARM
	}
	b := &bpf{labels: map[string]int{}}
	b.load(offArch)
	b.jump(unix.BPF_JEQ, arch, "native", "")
	b.jump(unix.BPF_JEQ, compat, "compat", "allow")
	b.label("native")
	b.load(offNr)
	b.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, ^uint32(x32SyscallBit)) // x32's calls are x86-64's numbers with this bit
	b.jump(unix.BPF_JEQ, unix.SYS_ADD_KEY, "eperm", "")
	b.jump(unix.BPF_JEQ, unix.SYS_REQUEST_KEY, "eperm", "")
	b.jump(unix.BPF_JEQ, unix.SYS_KEYCTL, "eperm", "")
	b.jump(unix.BPF_JEQ, unix.SYS_MQ_OPEN, "eperm", "allow")
	b.label("compat")
	b.load(offNr)
	for _, nr := range compatKept[compat] {
		b.jump(unix.BPF_JEQ, nr, "eperm", "")
	}
	b.label("allow")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("eperm")
	b.ret(errno(unix.EPERM))
	return b.assemble()
}

// refuseKept installs the filter of what the kernel keeps on the calling thread, as filterSockets
// installs its own. Where this build has no filter for the machine, it does nothing.
func refuseKept() error {
	if !SocketFilterAvailable() {
		return nil
	}
	prog, err := keptFilter()
	if err != nil {
		return err
	}
	return installFilter(prog)
}
