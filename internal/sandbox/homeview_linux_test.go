package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// As root on a laptop, the agent's uid runs a toolchain the person installed under their home (a pyenv
// shim here), read-only, and sees nothing else of that home; the home and its files keep their modes, and
// nothing is mounted outside the agent's boundary.
func TestHomeToolchainsShownReadOnly(t *testing.T) {
	uid := agentUID(t, true) // skips unless root
	base := openDir(t, -1)
	home := filepath.Join(base, "home", "person")
	shims := filepath.Join(home, ".pyenv", "shims")
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shims, "python"), []byte("#!/bin/sh\necho \"shim ran: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("private\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := openDir(t, uid)
	script := `python -m pytest; cat "$H/notes.txt" && echo READ-NOTES; touch "$H/.pyenv/mine" && echo WROTE-TOOL; touch "$H/new" && echo WROTE-HOME; ls -A "$H"; echo end`

	// Without the view the uid cannot run it: the check doctor makes is right to refuse.
	plain := newBoundary(t, Config{Separate: true, UID: uid, GID: uid, Writable: []string{work}})
	if out, _ := run(t, plain, work, script, "PATH="+shims+":/usr/bin:/bin", "H="+home); strings.Contains(out, "shim ran") {
		t.Fatalf("the agent's uid ran the shim through a closed home without the view:\n%s", out)
	}

	shown := Config{Separate: true, UID: uid, GID: uid, Writable: []string{work}, Home: home, HomeTools: []string{filepath.Join(home, ".pyenv")}}
	// What doctor and the check before a run ask (the agent's CLI and the verify programs): the same answers.
	if CanRun(Config{Separate: true, UID: uid, GID: uid}, filepath.Join(shims, "python")) || !CanRun(shown, filepath.Join(shims, "python")) {
		t.Errorf("CanRun of the shim: %v without the view, %v with it; want false, true",
			CanRun(Config{Separate: true, UID: uid, GID: uid}, filepath.Join(shims, "python")), CanRun(shown, filepath.Join(shims, "python")))
	}
	outside := filepath.Join(home, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if CanRun(shown, outside) {
		t.Error("CanRun said yes to a program of the home outside its toolchains")
	}
	b := newBoundary(t, shown)
	out, code := run(t, b, work, script, "PATH="+shims+":/usr/bin:/bin", "H="+home)
	// Listing the home shows only .pyenv, or nothing at all where Landlock's read rules keep the agent
	// from reading the home's directory itself.
	listed := strings.HasSuffix(out, ".pyenv\nend\n") || strings.Contains(out, "ls: cannot open directory")
	if code != 0 || !strings.Contains(out, "shim ran: -m pytest") || !listed {
		t.Errorf("exit %d, want the shim run and only .pyenv in the home:\n%s", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if line == "notes.txt" || line == "bin" {
			t.Errorf("the agent listed %s in the home:\n%s", line, out)
		}
	}
	for _, bad := range []string{"READ-NOTES", "WROTE-TOOL", "WROTE-HOME", "private"} {
		if strings.Contains(out, bad) {
			t.Errorf("the agent could: %s\n%s", bad, out)
		}
	}
	if st, err := os.Stat(home); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the home's mode changed: %v %v", st.Mode(), err)
	}
	for _, p := range []string{filepath.Join(home, ".pyenv", "mine"), filepath.Join(home, "new")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), home) {
		t.Errorf("a mount of the home outlived the agent's boundary:\n%s", m)
	}
	// Outside the person's home, or without the agent's own uid, it is refused.
	if _, err := New(Config{Launcher: launcher, Separate: true, UID: uid, GID: uid, Home: home, HomeTools: []string{"/usr/lib"}}); err == nil {
		t.Error("a toolchain directory outside the home was taken")
	}
	if _, err := New(Config{Launcher: launcher, Home: home, HomeTools: []string{filepath.Join(home, ".pyenv")}}); err == nil {
		t.Error("the view was taken without the agent's own uid")
	}
}
