package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A release build is stamped with its version and commit (as script/build.sh stamps it): gh ralph version
// says them, and gh ralph init pins ralph's action in the workflow to that commit, with the version.
func TestStampedVersion(t *testing.T) {
	t.Parallel()
	commit := strings.Repeat("c0ffee", 6) + "c0ff"
	stamped := filepath.Join(t.TempDir(), "gh-ralph")
	build := exec.Command("go", "build", "-o", stamped, "-ldflags", "-X main.version=1.2.3 -X main.commit="+commit, "../cmd/gh-ralph")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(stamped, "version").Output()
	if want := "gh ralph version 1.2.3 (commit c0ffeec)\nhttps://github.com/ralph-dev/gh-ralph/releases/tag/v1.2.3\n"; err != nil || string(out) != want {
		t.Errorf("version: %q, %v; want %q", out, err, want)
	}
	if out, err := exec.Command(stamped, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "gh ralph version 1.2.3 (commit c0ffeec)\n") {
		t.Errorf("--version: %q, %v", out, err)
	}
	e := newCLIEnv(t, "")
	if r := e.cli(stamped, "init", "--agent", "claude"); r.exit != 0 {
		t.Fatalf("init: exit %d\n%s", r.exit, r.stderr)
	}
	wf, _ := os.ReadFile(filepath.Join(e.work, ".github", "workflows", "ralph.yml"))
	if !strings.Contains(string(wf), "- uses: ralph-dev/gh-ralph/claude@"+commit+" # v1.2.3\n") {
		t.Errorf("init's workflow does not pin ralph to its commit:\n%s", wf)
	}

	// The release script and the image stamp the same way.
	for _, f := range []string{"../script/build.sh", "../script/image.sh"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"-X main.version=", "-X main.commit="} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not stamp %s", f, want)
			}
		}
	}
	if b, err := os.ReadFile("../VERSION"); err != nil || strings.Count(strings.TrimSpace(string(b)), ".") != 2 {
		t.Errorf("VERSION: %q, %v", b, err)
	}
}
