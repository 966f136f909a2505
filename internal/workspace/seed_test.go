package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SeedHome copies a cache's directories and regular files into the agent's HOME, the agent's, and never
// a symlink nor what one points to.
func TestSeedHomeCopiesRegularFiles(t *testing.T) {
	owner := Owner{}
	if os.Geteuid() == 0 {
		owner = Owner{UID: 4242, GID: 4243}
	}
	f := newFixture(t, owner)
	w := f.prepare(t, 7, "ralph/issue-7")
	src := filepath.Join(t.TempDir(), "go-build")
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, filepath.Join(src, "ab", "ab12-a"), "action\n")
	writeFile(t, filepath.Join(src, "ab", "ab12-d"), "output!\n")
	writeFile(t, filepath.Join(src, "README"), "go cache\n")
	writeFile(t, secret, "not a cache's\n")
	symlink(t, secret, filepath.Join(src, "ab", "link"))
	symlink(t, filepath.Dir(secret), filepath.Join(src, "dirlink"))

	n, err := w.SeedHome(".cache/go-build", src, 1<<20)
	if err != nil || n != int64(len("action\noutput!\ngo cache\n")) {
		t.Fatalf("SeedHome = %d, %v", n, err)
	}
	dst := filepath.Join(w.Home, ".cache", "go-build")
	for rel, want := range map[string]string{"ab/ab12-a": "action\n", "ab/ab12-d": "output!\n", "README": "go cache\n"} {
		b, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, want)
		}
	}
	for _, rel := range []string{"ab/link", "dirlink"} {
		if _, err := os.Lstat(filepath.Join(dst, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was copied (%v)", rel, err)
		}
	}
	if owner.UID != 0 {
		for _, p := range []string{filepath.Join(w.Home, ".cache"), dst, filepath.Join(dst, "ab"), filepath.Join(dst, "ab", "ab12-a")} {
			st, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if s := st.Sys().(*syscall.Stat_t); int(s.Uid) != owner.UID || int(s.Gid) != owner.GID {
				t.Errorf("%s is %d:%d, want the agent's %d:%d", p, s.Uid, s.Gid, owner.UID, owner.GID)
			}
		}
	}
}

// A cache larger than the limit is not copied at all, and a missing one copies nothing without an error.
func TestSeedHomeLimitAndMissing(t *testing.T) {
	f := newFixture(t, Owner{})
	w := f.prepare(t, 7, "ralph/issue-7")
	src := filepath.Join(t.TempDir(), "go-build")
	writeFile(t, filepath.Join(src, "00", "a"), "0123456789")
	writeFile(t, filepath.Join(src, "01", "b"), "0123456789")
	n, err := w.SeedHome(".cache/go-build", src, 15)
	if !errors.Is(err, ErrSeedTooLarge) || n <= 15 {
		t.Errorf("over the limit: SeedHome = %d, %v; want more than 15 and ErrSeedTooLarge", n, err)
	}
	if _, err := os.Lstat(filepath.Join(w.Home, ".cache")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("over the limit, HOME has a .cache (%v)", err)
	}
	if n, err := w.SeedHome(".cache/go-build", filepath.Join(src, "absent"), 15); n != 0 || err != nil {
		t.Errorf("missing: SeedHome = %d, %v", n, err)
	}
	if n, err := w.SeedHome(".cache/go-build", src, 20); n != 20 || err != nil {
		t.Errorf("at the limit: SeedHome = %d, %v", n, err)
	}
}
