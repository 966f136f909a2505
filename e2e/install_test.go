package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Installing from source, as the README says: in a fresh clone (a directory named gh-ralph), `gh extension
// install .` and then `gh ralph …`, which runs the clone's gh-ralph script: it builds ralph and runs it.
func TestInstallFromSource(t *testing.T) {
	// In parallel: it builds ralph from a copy of the sources (half a minute on a small machine), which
	// nothing else touches; run alone, it held up every other test for that long.
	t.Parallel()
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed (apt-get install -y gh); .ci/run installs it")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	// The clone: the repository's files, as git would check them out.
	files, err := exec.Command("git", "-C", "..", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not in a git checkout of ralph: %v", err)
	}
	dir := t.TempDir()
	clone := filepath.Join(dir, "gh-ralph")
	for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		info, err := os.Lstat(filepath.Join("..", f))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, f), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GH_CONFIG_DIR=" + filepath.Join(dir, "gh-config"), "XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"GH_NO_UPDATE_NOTIFIER=1", "GH_PROMPT_DISABLED=1", "GH_HOST=github.com", "GH_TOKEN=unused",
		"PATH=" + strings.Join([]string{filepath.Dir(gh), filepath.Dir(goBin), "/usr/bin", "/bin"}, ":")}
	for _, k := range []string{"HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = clone
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	run(gh, "extension", "install", ".")
	if got := run(gh, "ralph", "version"); !strings.HasPrefix(got, "gh ralph version ") {
		t.Errorf("gh ralph version after gh extension install . printed %q", got)
	}
	if _, err := os.Stat(filepath.Join(clone, ".cache", "bin", "gh-ralph")); err != nil {
		t.Errorf("the script left no build in .cache/bin: %v", err)
	}
}
