package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestImageInStep keeps action.yml's image, the release's tags (VERSION), the release workflow and the
// Dockerfile in step: a run pulls the image the release published for the version action.yml is at.
func TestImageInStep(t *testing.T) {
	t.Parallel()
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	version := strings.TrimSpace(read("VERSION"))
	var action struct {
		Runs struct {
			Using string `yaml:"using"`
			Image string `yaml:"image"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal([]byte(read("action.yml")), &action); err != nil {
		t.Fatal(err)
	}
	if got, want := action.Runs.Image, "docker://ghcr.io/ralph-dev/gh-ralph:"+version; action.Runs.Using != "docker" || got != want {
		t.Errorf("action.yml runs %s %q, want docker %q (VERSION is %s): a run pulls the released image", action.Runs.Using, got, want, version)
	}

	release := read(".github/workflows/release.yml")
	for _, want := range []string{
		`"${TAG#v}" != "$version"`,                    // the tag is VERSION's
		`image: docker://$image:$version" action.yml`, // and action.yml names its image
		`image="ghcr.io/${GITHUB_REPOSITORY,,}"`,
		"--platform linux/amd64,linux/arm64",
		"--provenance=mode=max",
		`--tag "$image:$version" --push .`,
		"packages: write",
	} {
		if !strings.Contains(release, want) {
			t.Errorf("release.yml has no %q", want)
		}
	}

	// The Dockerfile runs the steps of script/image.sh, which CI runs without an engine: no step of its own.
	dockerfile := read("Dockerfile")
	var runs []string
	for _, line := range strings.Split(dockerfile, "\n") {
		if strings.HasPrefix(line, "RUN ") {
			runs = append(runs, line)
		}
	}
	want := []string{
		"RUN go mod download",
		`RUN GOARCH="$TARGETARCH" RALPH_VERSION="$RALPH_VERSION" RALPH_COMMIT="$RALPH_COMMIT" script/image.sh binary /out`,
		"RUN /tmp/image.sh system && /tmp/image.sh clis && rm /tmp/image.sh",
	}
	if !slices.Equal(runs, want) {
		t.Errorf("the Dockerfile's RUN lines:\n%s\nwant:\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(dockerfile, "npm install") {
		t.Errorf("the Dockerfile installs from npm itself: the list belongs in script/image.sh")
	}

	// The image's CLIs are the ones the README's sizes were measured for, and CI's.
	out, err := exec.Command("../script/image.sh", "packages").Output()
	if err != nil {
		t.Fatalf("script/image.sh packages: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) != 3 {
		t.Errorf("script/image.sh packages = %q, want the three agent CLIs", pkgs)
	}
	readme := strings.Join(strings.Fields(read("README.md")), " ")
	if !strings.Contains(readme, "`"+strings.Join(pkgs, " ")+"`") {
		t.Errorf("README's \"Installing the CLIs\" does not name %q", pkgs)
	}
	if !strings.Contains(read(".ci/run"), "script/image.sh clis .cache/agents") {
		t.Errorf(".ci/run does not install the image's CLIs with script/image.sh")
	}
}

// TestImageBinary runs the image's build step without a container engine: a static Linux binary, stamped
// with VERSION. (.ci/run builds it for both platforms the release publishes; arm64 alone takes minutes here.)
func TestImageBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds ralph twice")
	}
	b, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(b))
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for _, arch := range []string{runtime.GOARCH} {
		machine, ok := machines[arch]
		if !ok {
			t.Skipf("the image is built for amd64 and arm64, not %s", arch)
		}
		out := t.TempDir()
		cmd := exec.Command("../script/image.sh", "binary", out)
		cmd.Env = append(os.Environ(), "GOARCH="+arch, "RALPH_COMMIT=c0ffee")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("script/image.sh binary (%s): %v\n%s", arch, err, b)
		}
		f, err := elf.Open(filepath.Join(out, "gh-ralph"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != machine {
			t.Errorf("%s: the binary is for %v", arch, f.Machine)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s: the binary is dynamically linked", arch)
			}
		}
		f.Close()
		got, err := exec.Command(filepath.Join(out, "gh-ralph"), "--version").Output()
		if err != nil || !strings.HasPrefix(string(got), "gh ralph version "+version+"\n") {
			t.Errorf("--version: %q, %v; want %s", got, err, version)
		}
	}
}
