package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wrapScript runs script/action.sh (the composite action's run:) with env only, as a runner's step would.
func wrapScript(t *testing.T, mode string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "../script/action.sh", mode)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("script/action.sh %s: %v", mode, err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// The composite step runs only an image named by digest, and says what to do otherwise: a commit between
// releases names the all-zero digest.
func TestActionWrapNeedsADigest(t *testing.T) {
	t.Parallel()
	zero := "ghcr.io/ralph-dev/gh-ralph:1.0.0@sha256:" + strings.Repeat("0", 64)
	for _, tt := range []struct{ image, want string }{
		{zero, "names no published image (" + zero + "): use a release (ralph-dev/gh-ralph@vX.Y.Z, or its commit)"},
		{"ghcr.io/ralph-dev/gh-ralph:1.0.0", `RALPH_IMAGE is "ghcr.io/ralph-dev/gh-ralph:1.0.0", not an image named by digest`},
		{"", `RALPH_IMAGE is "", not an image named by digest`},
	} {
		for _, mode := range []string{"where", "args"} {
			out, code := wrapScript(t, mode, "RALPH_IMAGE="+tt.image, "GITHUB_WORKSPACE=/w", "RUNNER_TEMP=/t")
			if code != 2 || !strings.Contains(out, tt.want) || strings.Contains(out, "wrap=") || strings.Contains(out, "--rm") {
				t.Errorf("%s with %q: exit %d, output %q; want exit 2 saying %q", mode, tt.image, code, out, tt.want)
			}
		}
	}
}

// The view's docker run: the step's PATH and the toolchain variables go in, the runner's tokens do not;
// the system and tool directories and the toolchain homes are mounted read-only, the rest of the runner's
// home and the Docker socket not at all.
func TestActionWrapArgs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, d := range []string{".cargo", ".rustup", ".ssh", ".docker"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	image := "ghcr.io/ralph-dev/gh-ralph:1.0.0-claude@sha256:" + strings.Repeat("ab", 32)
	stepPath := "/opt/hostedtoolcache/go/1.26.0/x64/bin:/opt/hostedtoolcache/node/22.1.0/x64/bin:/usr/bin:/bin"
	out, code := wrapScript(t, "args", "RALPH_IMAGE="+image, "HOME="+home, "PATH="+stepPath,
		"GITHUB_WORKSPACE=/home/runner/work/demo/demo", "RUNNER_TEMP=/home/runner/work/_temp",
		"GITHUB_OUTPUT=/home/runner/work/_temp/_runner_file_commands/set_output_1",
		"GITHUB_REPOSITORY=octo/demo", "INPUT_TOKEN=ghs_x", "RALPH_AGENT_WRITABLE=/cache", "RALPH_AGENT_READABLE=/sdk",
		"GOROOT=/opt/hostedtoolcache/go/1.26.0/x64", "JAVA_HOME=/usr/lib/jvm/temurin-21", "pythonLocation=/opt/hostedtoolcache/Python/3.12/x64",
		"ACTIONS_RUNTIME_TOKEN=secret", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=secret", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x",
		"ACTIONS_CACHE_URL=https://x", "GITHUB_TOKEN=secret", "SOME_OTHER=1")
	if code != 0 {
		t.Fatalf("args: exit %d\n%s", code, out)
	}
	args := strings.Split(strings.TrimSpace(out), "\n")
	pairs := map[string]bool{}
	for i := 0; i+1 < len(args); i++ {
		pairs[args[i]+" "+args[i+1]] = true
	}
	for _, want := range []string{
		"--cap-add NET_ADMIN", "--security-opt no-new-privileges", "--workdir /home/runner/work/demo/demo",
		"-v /usr:/usr:ro", "-v /etc:/etc:ro",
		"-v " + home + "/.cargo:" + home + "/.cargo:ro", "-v " + home + "/.rustup:" + home + "/.rustup:ro",
		"-v /home/runner/work/demo/demo:/home/runner/work/demo/demo", "-v /home/runner/work/_temp:/home/runner/work/_temp",
		"-e PATH=" + stepPath + ":/ralph/bin", "-e RALPH_AGENT_READABLE=/ralph:/sdk:" + home + "/.cargo:" + home + "/.rustup", "-e HOME=/home/runner/work/_temp/_ralph_home",
		"-e GOROOT", "-e JAVA_HOME", "-e pythonLocation", "-e INPUT_TOKEN", "-e GITHUB_REPOSITORY", "-e RALPH_AGENT_WRITABLE",
		"--entrypoint /ralph/bin/gh-ralph", image + " action",
	} {
		if !pairs[want] {
			t.Errorf("docker run has no %q:\n%s", want, out)
		}
	}
	if args[len(args)-1] != "action" || args[len(args)-2] != image {
		t.Errorf("docker run ends %q, want the image and action", args[len(args)-2:])
	}
	for _, never := range []string{"ACTIONS_", "GITHUB_TOKEN", "SOME_OTHER", "docker.sock", ".ssh", ".docker", "-v " + home + ":", "--privileged", "SYS_ADMIN"} {
		if strings.Contains(out, never) {
			t.Errorf("docker run passes %q:\n%s", never, out)
		}
	}
	if slices.Contains(args, "-e") && slices.Contains(args, "HOME") {
		t.Errorf("docker run passes the runner's HOME")
	}
}

// Where the view cannot run, the composite's first step says why in the log, as a warning, and chooses
// the plain container step.
func TestActionWrapWhere(t *testing.T) {
	t.Parallel()
	image := "RALPH_IMAGE=ghcr.io/ralph-dev/gh-ralph:1.0.0@sha256:" + strings.Repeat("ab", 32)
	out, code := wrapScript(t, "where", image, "RUNNER_OS=macOS", "GITHUB_OUTPUT=/dev/stdout")
	if code != 0 || !strings.Contains(out, "::warning title=ralph::the toolchain view cannot run here: the runner is not Linux (macOS)") ||
		!strings.Contains(out, "runs as a plain container action instead") || !strings.HasSuffix(out, "wrap=false\n") {
		t.Errorf("where on macOS: exit %d, output %q", code, out)
	}
	// No docker command at all (PATH without one).
	out, code = wrapScript(t, "where", image, "RUNNER_OS=Linux", "GITHUB_OUTPUT=/dev/stdout", "PATH="+t.TempDir()+":/usr/bin:/bin")
	if _, err := os.Stat("/.dockerenv"); err == nil {
		if !strings.Contains(out, "the job runs in a container") || !strings.HasSuffix(out, "wrap=false\n") {
			t.Errorf("where in a container: exit %d, output %q", code, out)
		}
	} else if _, err := exec.LookPath("docker"); err != nil && (code != 0 || !strings.HasSuffix(out, "wrap=false\n")) {
		t.Errorf("where without docker: exit %d, output %q", code, out)
	}
}

// The caches the job restored are mounted read-only at their own paths, open to the agent's reads, and
// named to ralph in the variables the tools read (its HOME is not the runner's): under the runner's home
// where no variable names them, where GOCACHE, GOPATH, npm_config_cache or PIP_CACHE_DIR say otherwise.
// A cache that does not exist, or a variable naming the runner's home or a relative path, mounts nothing.
func TestActionWrapJobCaches(t *testing.T) {
	t.Parallel()
	image := "RALPH_IMAGE=ghcr.io/ralph-dev/gh-ralph:1.0.0@sha256:" + strings.Repeat("ab", 32)
	step := []string{image, "GITHUB_WORKSPACE=/home/runner/work/demo/demo", "RUNNER_TEMP=/home/runner/work/_temp"}
	mkdirs := func(t *testing.T, root string, dirs ...string) {
		t.Helper()
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(t *testing.T, env ...string) (string, map[string]bool) {
		t.Helper()
		out, code := wrapScript(t, "args", append(slices.Clone(step), env...)...)
		if code != 0 {
			t.Fatalf("args: exit %d\n%s", code, out)
		}
		args := strings.Split(strings.TrimSpace(out), "\n")
		pairs := map[string]bool{}
		for i := 0; i+1 < len(args); i++ {
			pairs[args[i]+" "+args[i+1]] = true
		}
		return out, pairs
	}
	readable := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, "RALPH_AGENT_READABLE="); ok {
				return v
			}
		}
		return ""
	}

	t.Run("under the runner's home", func(t *testing.T) {
		home := t.TempDir()
		mkdirs(t, home, ".cache/go-build", "go/pkg/mod/cache/download", ".npm", ".cache/pip", ".cache/other", ".ssh")
		out, pairs := run(t, "HOME="+home)
		var dirs []string
		for name, d := range map[string]string{"GOCACHE": ".cache/go-build", "GOMODCACHE": "go/pkg/mod", "npm_config_cache": ".npm", "PIP_CACHE_DIR": ".cache/pip"} {
			p := filepath.Join(home, d)
			dirs = append(dirs, p)
			for _, want := range []string{"-v " + p + ":" + p + ":ro", "-e " + name + "=" + p} {
				if !pairs[want] {
					t.Errorf("docker run has no %q:\n%s", want, out)
				}
			}
		}
		got := readable(out)
		for _, d := range dirs {
			if !slices.Contains(strings.Split(got, ":"), d) {
				t.Errorf("RALPH_AGENT_READABLE=%s has no %s", got, d)
			}
		}
		for _, never := range []string{home + "/.cache:", home + "/.cache/other", home + "/.ssh", "-v " + home + ":"} {
			if strings.Contains(out, never) {
				t.Errorf("docker run passes %q:\n%s", never, out)
			}
		}
	})

	t.Run("where the variables say", func(t *testing.T) {
		home, elsewhere := t.TempDir(), t.TempDir()
		mkdirs(t, home, ".cache/go-build", "go/pkg/mod", ".npm", ".cache/pip")
		mkdirs(t, elsewhere, "gocache", "gopath/pkg/mod", "npm", "pip")
		out, pairs := run(t, "HOME="+home, "GOCACHE="+elsewhere+"/gocache", "GOPATH="+elsewhere+"/gopath:/other",
			"npm_config_cache="+elsewhere+"/npm", "PIP_CACHE_DIR="+elsewhere+"/pip")
		for name, d := range map[string]string{"GOCACHE": "gocache", "GOMODCACHE": "gopath/pkg/mod", "npm_config_cache": "npm", "PIP_CACHE_DIR": "pip"} {
			p := filepath.Join(elsewhere, d)
			for _, want := range []string{"-v " + p + ":" + p + ":ro", "-e " + name + "=" + p} {
				if !pairs[want] {
					t.Errorf("docker run has no %q:\n%s", want, out)
				}
			}
			if strings.Count(out, "\n"+name+"\n")+strings.Count(out, "\n"+name+"=") != 1 {
				t.Errorf("docker run passes %s more than once:\n%s", name, out)
			}
		}
		if strings.Contains(out, home) {
			t.Errorf("docker run names the runner's home's caches, which the variables do not:\n%s", out)
		}
	})

	t.Run("none, or not a cache", func(t *testing.T) {
		home := t.TempDir()
		mkdirs(t, home, ".ssh")
		out, _ := run(t, "HOME="+home, "GOCACHE="+home, "npm_config_cache=relative/npm", "PIP_CACHE_DIR=/", "GOMODCACHE="+home+"/absent")
		if strings.Contains(out, ":ro\n-e\nGOCACHE=") || strings.Contains(out, home+":") || strings.Contains(out, "relative/npm:") ||
			strings.Contains(out, "-v\n/:/:ro") || strings.Contains(out, "absent:") {
			t.Errorf("docker run mounts what is not a restored cache:\n%s", out)
		}
		if got := readable(out); got != "/ralph" {
			t.Errorf("RALPH_AGENT_READABLE=%s, want /ralph only", got)
		}
	})
}
