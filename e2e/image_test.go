package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"gopkg.in/yaml.v3"
)

// TestImageInStep keeps the actions' images, the release's tags (VERSION), the release workflow, the
// Dockerfile's targets, init and doctor in step: a run pulls the image the release published for the
// version its action is at, and the image of an agent's action holds that agent's CLI.
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
	out, err := exec.Command("../script/image.sh", "agents").Output()
	if err != nil {
		t.Fatalf("script/image.sh agents: %v", err)
	}
	agents := strings.Fields(string(out))
	if !slices.Equal(agents, preset.Names()) {
		t.Errorf("script/image.sh agents = %q, preset.Names() (init's and doctor's) = %q", agents, preset.Names())
	}
	type actionFile struct {
		Name    string         `yaml:"name"`
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]any `yaml:"outputs"`
		Runs    struct {
			Using string `yaml:"using"`
			Steps []struct {
				ID   string            `yaml:"id"`
				If   string            `yaml:"if"`
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	parse := func(p string) actionFile {
		var a actionFile
		if err := yaml.Unmarshal([]byte(read(p)), &a); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return a
	}
	root := parse("action.yml")
	release := read(".github/workflows/release.yml")
	dockerfile := read("Dockerfile")
	image := "ghcr.io/ralph-dev/gh-ralph:" + version
	for _, target := range append([]string{"slim"}, agents...) {
		path, tag := "action.yml", image
		if target != "slim" {
			path, tag = target+"/action.yml", image+"-"+target
		}
		a := parse(path)
		// A composite: where, then the view or the plain container step, each naming the image released
		// for VERSION by digest (script/pin-images.sh writes the release's; a commit between releases
		// names the all-zero one, which script/action.sh refuses with what to do).
		byDigest := regexp.MustCompile(`^` + regexp.QuoteMeta(tag) + `@sha256:[0-9a-f]{64}$`)
		steps := a.Runs.Steps
		if a.Runs.Using != "composite" || len(steps) != 3 || steps[0].ID != "where" || steps[1].ID != "view" || steps[2].ID != "plain" {
			t.Fatalf("%s runs %s with %d steps, want composite: where, view, plain", path, a.Runs.Using, len(steps))
		}
		script := "script/action.sh"
		if target != "slim" {
			script = "../script/action.sh"
		}
		for i, want := range []string{`"$GITHUB_ACTION_PATH/` + script + `" where`, `"$GITHUB_ACTION_PATH/` + script + `" run`} {
			if steps[i].Run != want || !byDigest.MatchString(steps[i].Env["RALPH_IMAGE"]) {
				t.Errorf("%s step %s runs %q with RALPH_IMAGE %q, want %q and %s@sha256:<digest>", path, steps[i].ID, steps[i].Run, steps[i].Env["RALPH_IMAGE"], want, tag)
			}
		}
		if got := strings.TrimPrefix(steps[2].Uses, "docker://"); !byDigest.MatchString(got) || got != steps[1].Env["RALPH_IMAGE"] || steps[2].With["args"] != "action" {
			t.Errorf("%s's plain step uses %q with args %q, want docker:// of the view's image %q, args action", path, steps[2].Uses, steps[2].With["args"], steps[1].Env["RALPH_IMAGE"])
		}
		if steps[1].If != "steps.where.outputs.wrap == 'true'" || steps[2].If != "steps.where.outputs.wrap != 'true'" {
			t.Errorf("%s: the view runs if %q and the plain step if %q: exactly one of them must", path, steps[1].If, steps[2].If)
		}
		// Every input reaches both; every output is either's.
		for name := range a.Inputs {
			want := "${{ inputs." + name + " }}"
			if steps[1].Env["INPUT_"+strings.ToUpper(name)] != want || steps[2].Env["INPUT_"+strings.ToUpper(name)] != want {
				t.Errorf("%s: input %s does not reach both steps as INPUT_%s", path, name, strings.ToUpper(name))
			}
		}
		for name, o := range a.Outputs {
			want := "${{ steps.view.outputs." + name + " || steps.plain.outputs." + name + " }}"
			if v, _ := o.(map[string]any)["value"].(string); v != want {
				t.Errorf("%s: output %s is %q, want %q", path, name, v, want)
			}
		}
		// The same action: only its name, description and image differ.
		if !reflect.DeepEqual(a.Inputs, root.Inputs) || !reflect.DeepEqual(a.Outputs, root.Outputs) {
			t.Errorf("%s's inputs or outputs differ from action.yml's", path)
		}
		if target != "slim" && agent.ActionOf(target) != "ralph-dev/gh-ralph/"+strings.TrimSuffix(path, "/action.yml") {
			t.Errorf("agent.ActionOf(%s) = %q, not the action at %s", target, agent.ActionOf(target), path)
		}
		if !strings.Contains(release, target+":"+path) {
			t.Errorf("release.yml does not build the target %s for %s", target, path)
		}
		if !strings.Contains(dockerfile, " AS "+target+"\n") {
			t.Errorf("the Dockerfile has no target %s", target)
		}
	}
	for _, want := range []string{
		`git ls-remote --exit-code --tags origin "refs/tags/v$version"`, // a release is VERSION's, once
		`--metadata-file "$RUNNER_TEMP/$target.json"`,                   // the digests it pushed
		`script/pin-images.sh "$image" "${digests[@]}"`,                 // go into the action files
		`git tag "v$version"`,                                           // of the tagged commit
		`release_tag: ${{ needs.image.outputs.tag }}`,
		`image="ghcr.io/${GITHUB_REPOSITORY,,}"`,
		`tag="$image:$version-$target"`,
		"--platform linux/amd64,linux/arm64 --target \"$target\"",
		"--provenance=mode=max",
		`--tag "$tag" --push .`,
		"packages: write",
	} {
		if !strings.Contains(release, want) {
			t.Errorf("release.yml has no %q", want)
		}
	}

	// BuildKit, and nothing from a registry but the base images: no syntax directive (it pulls a frontend
	// image), and every FROM is a base image or a stage of the file.
	if strings.Contains(dockerfile, "# syntax") || strings.Contains(dockerfile, "#syntax") {
		t.Errorf("the Dockerfile has a syntax directive, which pulls the dockerfile frontend from Docker Hub")
	}
	bases := []string{"golang:1.26-bookworm", "debian:bookworm-slim", "node:22-bookworm-slim"}
	stages := map[string]bool{}
	for _, line := range strings.Split(dockerfile, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "FROM" {
			continue
		}
		from := f[1]
		if strings.HasPrefix(from, "--platform=") {
			from = f[2]
		}
		if !stages[from] && !slices.Contains(bases, from) {
			if from != "scratch" {
				t.Errorf("the Dockerfile's %q is neither a base image (%q) nor a stage", line, bases)
			}
		}
		if n := len(f); f[n-2] == "AS" {
			stages[f[n-1]] = true
		}
	}

	// The Dockerfile runs the steps of script/image.sh, which CI runs without an engine: no step of its own.
	var runs []string
	for _, line := range strings.Split(dockerfile, "\n") {
		if strings.HasPrefix(line, "RUN ") {
			runs = append(runs, line)
		}
	}
	want := []string{
		"RUN go mod download",
		`RUN GOARCH="$TARGETARCH" RALPH_VERSION="$RALPH_VERSION" RALPH_COMMIT="$RALPH_COMMIT" script/image.sh binary /out`,
	}
	for _, a := range agents {
		want = append(want, `RUN image.sh cli `+a+` "$TARGETARCH" /out`)
	}
	want = append(want, "RUN /tmp/image.sh system && rm /tmp/image.sh")
	if !slices.Equal(runs, want) {
		t.Errorf("the Dockerfile's RUN lines:\n%s\nwant:\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(dockerfile, "npm install") {
		t.Errorf("the Dockerfile installs from npm itself: the list belongs in script/image.sh")
	}

	// The images' CLIs are the ones the README's sizes were measured for, and CI's.
	out, err = exec.Command("../script/image.sh", "packages").Output()
	if err != nil {
		t.Fatalf("script/image.sh packages: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) != len(agents) {
		t.Errorf("script/image.sh packages = %q, want one for each of %q", pkgs, agents)
	}
	readme := strings.Join(strings.Fields(read("README.md")), " ")
	if !strings.Contains(readme, "`"+strings.Join(pkgs, " ")+"`") {
		t.Errorf("README's \"Installing the CLIs\" does not name %q", pkgs)
	}
	ci := read(".ci/run")
	for _, want := range []string{`script/image.sh cli "$agent" "$arch" .cache/agents`, "script/container-test.sh"} {
		if !strings.Contains(ci, want) {
			t.Errorf(".ci/run has no %q: CI tests the images' own CLIs, and the images in an engine", want)
		}
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
		// The image's binary has no demo: no test server, none of its checkers of GitHub's API description.
		got, err = exec.Command(filepath.Join(out, "gh-ralph"), "demo").CombinedOutput()
		if err == nil || !strings.Contains(string(got), "has no demo") {
			t.Errorf("demo in the image's binary: %q, %v; want an error saying it has no demo", got, err)
		}
		info, err := buildinfo.ReadFile(filepath.Join(out, "gh-ralph"))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range info.Deps {
			if strings.HasPrefix(d.Path, "github.com/getkin/kin-openapi") || strings.HasPrefix(d.Path, "github.com/vektah/gqlparser") {
				t.Errorf("the image's binary holds %s (the demo's test server)", d.Path)
			}
		}
	}
}

// TestImageCLIIntegrity: a tarball the registry (or anyone between) serves in place of the pinned one is
// refused, and nothing of it lands where the image's CLI goes.
func TestImageCLIIntegrity(t *testing.T) {
	t.Parallel()
	var body bytes.Buffer
	gz := gzip.NewWriter(&body)
	tw := tar.NewWriter(gz)
	evil := []byte("#!/bin/sh\necho pwned\n")
	if err := tw.WriteHeader(&tar.Header{Name: "package/claude", Mode: 0o755, Size: int64(len(evil))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(evil)
	tw.Close()
	gz.Close()
	var asked []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	for _, arch := range []string{"amd64", "arm64"} {
		out := t.TempDir()
		cmd := exec.Command("../script/image.sh", "cli", "claude", arch, out)
		cmd.Env = append(os.Environ(), "RALPH_NPM_REGISTRY="+srv.URL)
		b, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: script/image.sh cli took a tarball that is not the pinned one:\n%s", arch, b)
		}
		if !strings.Contains(string(b), "sha512") {
			t.Errorf("%s: the refusal does not say why: %s", arch, b)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%s: %d entries left in the CLI's directory after the refusal", arch, len(entries))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/@anthropic-ai/claude-code-linux-x64/-/claude-code-linux-x64-2.1.330.tgz", "/@anthropic-ai/claude-code-linux-arm64/-/claude-code-linux-arm64-2.1.330.tgz"}
	if !slices.Equal(asked, want) {
		t.Errorf("fetched %q, want each platform's own package %q", asked, want)
	}
}

// TestImageCLIIntegrityLocked: pi's packages, installed by npm ci from script/agents/pi's lockfile, are each
// checked against the lockfile's integrity: a registry that serves another tarball in place of every
// package is refused, for each platform, and nothing is installed. The node and npm that install them are
// the real registry's (the test skips when it is out of reach).
func TestImageCLIIntegrityLocked(t *testing.T) {
	t.Parallel()
	var body bytes.Buffer
	gz := gzip.NewWriter(&body)
	tw := tar.NewWriter(gz)
	evil := []byte(`{"name":"evil","version":"1.0.0","scripts":{"postinstall":"echo pwned"}}`)
	if err := tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(evil))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(evil)
	tw.Close()
	gz.Close()
	tools := map[string][]byte{}
	var asked []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if b, ok := tools[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		asked = append(asked, r.URL.Path)
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	// The pinned node and npm, as script/image.sh names them, fetched from the real registry.
	image, err := os.ReadFile("../script/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\[(?:node/\w+|npm)\]=(\S+\.tgz)`).FindAllStringSubmatch(string(image), -1) {
		resp, err := http.Get("https://registry.npmjs.org/" + m[1])
		if err != nil {
			t.Skipf("the npm registry is out of reach: %v", err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Skipf("the npm registry is out of reach: %s %v", resp.Status, err)
		}
		tools["/"+m[1]] = b
	}
	if len(tools) != 3 {
		t.Fatalf("script/image.sh pins %d tarballs of node and npm, want 3", len(tools))
	}
	for _, arch := range []string{"amd64", "arm64"} {
		out := t.TempDir()
		cmd := exec.Command("../script/image.sh", "cli", "pi", arch, out)
		// npm would retry each refused tarball for minutes.
		cmd.Env = append(os.Environ(), "RALPH_NPM_REGISTRY="+srv.URL, "npm_config_fetch_retries=0")
		b, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: script/image.sh cli pi took tarballs that are not the pinned ones:\n%s", arch, b)
		}
		if !strings.Contains(string(b), "EINTEGRITY") {
			t.Errorf("%s: the refusal does not say why: %s", arch, b)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%s: %d entries left in the CLI's directory after the refusal", arch, len(entries))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 || !strings.HasSuffix(asked[0], ".tgz") {
		t.Errorf("the registry was asked for %q, want the lockfile's tarballs", asked)
	}
}
