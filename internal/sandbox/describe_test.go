package sandbox

import "testing"

// The log line of a boundary built before any step names the places each step adds, instead of saying
// that the agent may write "nothing", and what else it may read.
func TestDescribeNamesTheStepsPlaces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b    Boundary
		want string
	}{
		{Boundary{abi: 3}, "same user as ralph; landlock ABI 3, writes confined to the step's copy of the repository, its HOME and TMPDIR, and terminal-like devices; reads confined to those places, /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt, /etc, /proc, /sys and the directory of the program it runs; network open"},
		{Boundary{abi: 6, writable: []string{"/srv/cache"}, readOnly: []string{"/home/me/.cargo"}, separate: true, uid: 61000, gid: 61000},
			"uid 61000, gid 61000, no groups; landlock ABI 6, writes confined to /srv/cache, the step's copy of the repository, its HOME and TMPDIR, and terminal-like devices, signals and abstract sockets confined to its own processes; reads confined to those places, /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt, /etc, /proc, /sys, /home/me/.cargo and the directory of the program it runs; network open"},
		{Boundary{abi: 6, separate: true, uid: 61000, gid: 61000, net: true, netPorts: []int{4000}, netLandlock: true, netFilter: true, netOwner: true},
			"uid 61000, gid 61000, no groups; landlock ABI 6, writes confined to the step's copy of the repository, its HOME and TMPDIR, and terminal-like devices, signals and abstract sockets confined to its own processes; reads confined to those places, /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt, /etc, /proc, /sys and the directory of the program it runs; network: TCP connections only to ralph's ports (4000), no UDP, raw or other sockets, its uid's packets only to those ports on 127.0.0.1 and ::1 (an owner-match firewall rule)"},
		{Boundary{abi: 6, separate: true, uid: 61000, gid: 61000, net: true, netPorts: []int{4000}, netLandlock: true, netFilter: true, netOwnerWhy: "ralph lacks CAP_NET_ADMIN here"},
			"uid 61000, gid 61000, no groups; landlock ABI 6, writes confined to the step's copy of the repository, its HOME and TMPDIR, and terminal-like devices, signals and abstract sockets confined to its own processes; reads confined to those places, /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt, /etc, /proc, /sys and the directory of the program it runs; network: TCP connections only to ralph's ports (4000), no UDP, raw or other sockets, no owner-match firewall rule (ralph lacks CAP_NET_ADMIN here), so the kernel does not refuse a connection to another host on ralph's ports"},
	}
	for _, tt := range tests {
		if got := tt.b.Describe(); got != tt.want {
			t.Errorf("Describe() = %q, want %q", got, tt.want)
		}
	}
}
