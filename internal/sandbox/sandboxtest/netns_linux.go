// Package sandboxtest holds what the tests of the agent's boundary share: here, setting up the network
// namespace of its own that a firewall test runs in, so that the machine's firewall is never touched.
package sandboxtest

import "golang.org/x/sys/unix"

// LoopbackUp brings up lo, which a new network namespace has down.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
