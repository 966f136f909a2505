package e2e

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
)

// The hermetic choice (README: "Toolchains"): examples/toolchain-image is a Docker action of the user's own
// whose image extends one of ralph's published per-agent images with a toolchain. Its FROM names an image
// the release publishes (a target of ralph's Dockerfile, at VERSION), its PATH keeps the directories where
// ralph, git and the agent's CLI are, its action.yml is ralph's claude action but for the image, and a
// workflow that uses it from .github/actions/ralph lints clean.
func TestToolchainImageExample(t *testing.T) {
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
	// The targets the release publishes: slim, and each agent's, which has an action of its own.
	published := func(target string) bool {
		_, err := os.Stat(filepath.Join("..", target, "action.yml"))
		return target == "slim" || err == nil
	}
	example := read("examples/toolchain-image/Dockerfile")
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^FROM[ \t].*[ \t]AS[ \t]+(\S+)[ \t]*$`).FindAllStringSubmatch(read("Dockerfile"), -1) {
		targets[m[1]] = true
	}
	from := regexp.MustCompile(`(?m)^FROM[ \t]+(\S+)[ \t]*$`).FindStringSubmatch(example)
	if from == nil {
		t.Fatal("examples/toolchain-image/Dockerfile has no FROM line of one image")
	}
	tag, ok := strings.CutPrefix(from[1], "ghcr.io/ralph-dev/gh-ralph:"+version)
	target := strings.TrimPrefix(tag, "-")
	if tag == "" {
		target = "slim"
	}
	if !ok || (tag != "" && !strings.HasPrefix(tag, "-")) || !targets[target] || !published(target) {
		t.Errorf("the example's FROM is %s, want ghcr.io/ralph-dev/gh-ralph:%s-<agent> of a target of ralph's Dockerfile (%v)", from[1], version, targets)
	}
	// Its PATH keeps the slim image's, where ralph, git and the agent's CLI are.
	slimPath := regexp.MustCompile(`(?m)^ENV PATH=(\S+)`).FindStringSubmatch(read("Dockerfile"))
	path := regexp.MustCompile(`(?m)^ENV PATH=(\S+)`).FindStringSubmatch(example)
	if slimPath == nil || path == nil {
		t.Fatal("no ENV PATH in ralph's Dockerfile or the example's")
	}
	for _, d := range strings.Split(slimPath[1], ":") {
		if !slices.Contains(strings.Split(path[1], ":"), d) {
			t.Errorf("the example's PATH %s drops %s", path[1], d)
		}
	}

	type actionFile struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]any `yaml:"outputs"`
		Runs    struct {
			Using string   `yaml:"using"`
			Image string   `yaml:"image"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	parse := func(p string) actionFile {
		var a actionFile
		if err := yaml.Unmarshal([]byte(read(p)), &a); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return a
	}
	own, ralphs := parse("examples/toolchain-image/action.yml"), parse(target+"/action.yml")
	if target == "slim" {
		ralphs = parse("action.yml")
	}
	// ralph's own action is a composite that starts its image (script/action.sh); the example is a plain
	// Docker action of the image, which runs ralph's action command.
	if own.Runs.Using != "docker" || own.Runs.Image != "Dockerfile" || !slices.Equal(own.Runs.Args, []string{"action"}) {
		t.Errorf("the example's action runs %s %s %q, want docker Dockerfile [action]", own.Runs.Using, own.Runs.Image, own.Runs.Args)
	}
	// The same inputs, and the same outputs by name and description (a composite's carry a value: too).
	described := func(outputs map[string]any) map[string]any {
		m := map[string]any{}
		for name, o := range outputs {
			if o, ok := o.(map[string]any); ok {
				m[name] = o["description"]
				continue
			}
			m[name] = o
		}
		return m
	}
	if !reflect.DeepEqual(own.Inputs, ralphs.Inputs) || !reflect.DeepEqual(described(own.Outputs), described(ralphs.Outputs)) {
		t.Errorf("the example's inputs or outputs differ from %s/action.yml's: copy them", target)
	}

	// A workflow naming it as README says lints clean, inputs checked against its action.yml.
	repo := t.TempDir()
	dir := filepath.Join(repo, ".github", "actions", "ralph")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"action.yml", "Dockerfile"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(read("examples/toolchain-image/"+name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wf := regexp.MustCompile(`uses: ralph-dev/gh-ralph\S*@v1`).ReplaceAllString(read("examples/ralph.yml"), "uses: ./.github/actions/ralph")
	if !strings.Contains(wf, "uses: ./.github/actions/ralph") {
		t.Fatal("examples/ralph.yml names no ralph action to replace")
	}
	wfPath := filepath.Join(repo, ".github", "workflows", "ralph.yml")
	if err := os.MkdirAll(filepath.Dir(wfPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wfPath, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{WorkingDir: repo, LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{wf, strings.Replace(wf, "command: ${{ inputs.command }}", "commandd: ${{ inputs.command }}", 1)} {
		if err := os.WriteFile(wfPath, []byte(variant), 0o644); err != nil {
			t.Fatal(err)
		}
		errs, err := l.LintFile(wfPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		if variant == wf {
			for _, e := range errs {
				t.Errorf("actionlint: %d:%d: %s [%s]", e.Line, e.Column, e.Message, e.Kind)
			}
		} else if len(errs) == 0 {
			t.Error("actionlint did not check the inputs against the local action (a misspelt input passed)")
		}
	}
}
