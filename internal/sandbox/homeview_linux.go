package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// showHome gives this thread, and the command forked from it, a mount namespace of their own in which
// home is an empty tmpfs, closed to writes by other users, showing only tools (read-only) and the
// writable directories under home (writable), each at its own path. Nothing changes outside the namespace:
// it receives the machine's mounts but sends none back, and the person's files keep their modes.
func showHome(home string, tools, writable []string) error {
	type bind struct {
		target string
		fd     int
		ro     bool
	}
	var binds []bind
	defer func() {
		for _, b := range binds {
			_ = unix.Close(b.fd)
		}
	}()
	add := func(dir string, ro bool) error {
		rel, err := filepath.Rel(home, dir)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return nil // not under home: seen as it is
		}
		// Opened before home is covered: the bind's source is the directory itself, not a path to it.
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", dir, err)
		}
		binds = append(binds, bind{dir, fd, ro})
		return nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	// In the new namespace (a bind's source must be a mount of it), before home is covered.
	for _, d := range tools {
		if err := add(d, true); err != nil {
			return err
		}
	}
	for _, d := range writable {
		if err := add(d, false); err != nil {
			return err
		}
	}
	// Parents before what is under them.
	sort.SliceStable(binds, func(i, j int) bool { return len(binds[i].target) < len(binds[j].target) })
	if err := unix.Mount("tmpfs", home, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("covering %s: %w", home, err)
	}
	for _, b := range binds {
		if err := os.MkdirAll(b.target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", b.fd), b.target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("showing %s: %w", b.target, err)
		}
		if b.ro {
			if err := unix.Mount("", b.target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", b.target, err)
			}
		}
	}
	if err := unix.Mount("", home, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("making %s read-only: %w", home, err)
	}
	// The working directory, when under home, is the one shown.
	return unix.Chdir(cwd)
}
