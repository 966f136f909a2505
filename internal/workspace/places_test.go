package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPlacesClosedToTheAgent: as root, ralph's repository (its objects, its index files, its config) is
// closed to the agent's user, who still reaches its own area.
func TestPlacesClosedToTheAgent(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent has a user of its own only when ralph runs as root")
	}
	owner := Owner{UID: 61001, GID: 61001}
	f := newFixture(t, owner)
	places, err := NewPlaces(filepath.Join(f.root, "cache"), owner.UID, owner.GID)
	if err != nil {
		t.Fatal(err)
	}
	defer places.Close()
	f.store = f.open(t, Options{GitDir: places.GitDir, Agents: places.Agents})
	w := f.prepare(t, 14, "ralph/issue-14")
	// asAgent tries to open path as the agent's user, for reading (a directory: listing it).
	asAgent := func(path string) error {
		cmd := exec.Command("/bin/sh", "-c", `if [ -d "$1" ]; then ls "$1"; else cat "$1"; fi >/dev/null`, "sh", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(owner.UID), Gid: uint32(owner.GID), Groups: []uint32{}}}
		return cmd.Run()
	}
	if err := asAgent(filepath.Join(w.Dir, "README.md")); err != nil {
		t.Fatalf("sanity: the agent cannot read its own copy: %v", err)
	}
	closed := []string{places.GitDir, filepath.Join(places.GitDir, "objects"), filepath.Join(places.GitDir, "config"), w.index}
	pack, _ := filepath.Glob(filepath.Join(places.GitDir, "objects", "pack", "*.pack"))
	closed = append(closed, pack...)
	for _, p := range closed {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("sanity: %s: %v", p, err)
		}
		if err := asAgent(p); err == nil {
			t.Errorf("the agent's user can read %s", p)
		}
	}
}

// TestCacheDirReadsRalphsEnvironment: ralph's repository for a checkout is kept under the user's cache
// directory of the environment ralph is given, not the process's: XDG_CACHE_HOME when absolute, else
// HOME's .cache, else TMPDIR.
func TestCacheDirReadsRalphsEnvironment(t *testing.T) {
	t.Parallel()
	source := t.TempDir()
	if out, err := exec.Command("git", "init", "--quiet", source).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CACHE_HOME": "/elsewhere/cache", "HOME": "/home/someone"}, "/elsewhere/cache/ralph"},
		{map[string]string{"XDG_CACHE_HOME": "relative", "HOME": "/home/someone"}, "/home/someone/.cache/ralph"},
		{map[string]string{"TMPDIR": "/scratch"}, "/scratch/ralph"},
		{nil, "/tmp/ralph"},
	} {
		got, err := CacheDir(source, func(key string) string { return tt.env[key] })
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(got) != tt.want || !strings.HasPrefix(filepath.Base(got), filepath.Base(source)+"-") {
			t.Errorf("CacheDir in %v = %s, want %s/%s-<hash>", tt.env, got, tt.want, filepath.Base(source))
		}
	}
}
