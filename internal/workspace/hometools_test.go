package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A home closed to the agent's uid shows it the toolchain directories it has; an open one, or one without
// any, shows nothing (the agent reaches it as it is, or has nothing to run there).
func TestHomeTools(t *testing.T) {
	t.Parallel()
	base, err := os.MkdirTemp("", "ralph-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "person")
	for _, d := range []string{".pyenv/shims", ".nvm/versions", ".local/share/mise", ".ssh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	uid, gid := 61977, 61977
	h, tools := HomeTools(home, uid, gid)
	want := []string{filepath.Join(home, ".pyenv"), filepath.Join(home, ".nvm"), filepath.Join(home, ".local/share/mise")}
	if h != home || !slices.Equal(tools, want) {
		t.Errorf("HomeTools = %q %q, want %q %q", h, tools, home, want)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if h, tools := HomeTools(home, uid, gid); h != "" || tools != nil {
		t.Errorf("an open home: %q %q", h, tools)
	}
	if h, tools := HomeTools("/", uid, gid); h != "" || tools != nil {
		t.Errorf("/: %q %q", h, tools)
	}
}
