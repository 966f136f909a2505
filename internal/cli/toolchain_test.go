package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// init reads the repository's files and writes, before ralph's step, the setup steps its toolchains
// need at the versions the files name, and a verify that runs its tests; what it writes lints clean.
func TestInitSetsUpTheRepositorysToolchains(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		files  map[string]string
		want   []string // in the workflow, in this order, all before ralph's step
		verify []string
	}{
		{"go", map[string]string{"go.mod": "module example.com/m\n\ngo 1.25.0\n\ntoolchain go1.26.1\n"},
			[]string{"name: Go 1.26.1 (go.mod)", "uses: actions/setup-go@", "go-version-file: go.mod"}, []string{"go test ./..."}},
		{"npm", map[string]string{"package.json": `{"engines":{"node":">=20"},"scripts":{"test":"node --test"}}`, "package-lock.json": "{}"},
			[]string{"uses: actions/setup-node@", `node-version: ">=20"`, "cache: npm"}, []string{"npm ci", "npm test"}},
		{"yarn with nvmrc", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`, "yarn.lock": "", ".nvmrc": "22\n"},
			[]string{"uses: actions/setup-node@", "node-version-file: .nvmrc", "cache: yarn"}, []string{"yarn install --frozen-lockfile", "yarn test"}},
		{"pnpm", map[string]string{"package.json": `{"packageManager":"pnpm@10.1.0","scripts":{"test":"vitest"}}`, "pnpm-lock.yaml": ""},
			[]string{"uses: pnpm/action-setup@", "uses: actions/setup-node@", "node-version: lts/*", "cache: pnpm"}, []string{"pnpm install --frozen-lockfile", "pnpm test"}},
		{"npm without tests", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`},
			[]string{"uses: actions/setup-node@"}, []string{"npm install"}},
		{"python", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\nrequires-python = \">=3.12\"\n", "requirements.txt": "requests\n"},
			[]string{"uses: actions/setup-python@", "python-version-file: pyproject.toml", "cache: pip", "run: python -m pip install pytest -r requirements.txt"}, []string{"python -m pytest"}},
		{"maven", map[string]string{"pom.xml": "<project><properties><maven.compiler.release>17</maven.compiler.release></properties></project>"},
			[]string{"uses: actions/setup-java@", "distribution: temurin", `java-version: "17"`, "cache: maven"}, []string{"mvn -B test"}},
		{"gradle", map[string]string{"build.gradle.kts": "java { toolchain { languageVersion = JavaLanguageVersion.of(21) } }", "gradlew": "#!/bin/sh\n"},
			[]string{"uses: actions/setup-java@", `java-version: "21"`, "cache: gradle"}, []string{"./gradlew test"}},
		{"rust", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"1.85\"\n"},
			[]string{"name: Rust (rust-toolchain.toml)", "run: rustup toolchain install"}, []string{"cargo test"}},
		{"a version that is no version", map[string]string{"package.json": `{"engines":{"node":"${{ secrets.X }}"}}`},
			[]string{"node-version: lts/*"}, []string{"npm install"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(e.dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if code := e.run("init", "--agent", "claude"); code != 0 {
				t.Fatalf("exit %d: %s", code, e.stderr)
			}
			wf := filepath.Join(e.dir, ".github", "workflows", "ralph.yml")
			lint(t, wf)
			b, _ := os.ReadFile(wf)
			got := string(b)
			ralph := strings.Index(got, "uses: ralph-dev/gh-ralph")
			checkout := strings.Index(got, "uses: actions/checkout@")
			at := checkout
			for _, w := range c.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Errorf("the workflow has no %q after the checkout and in order:\n%s", w, got[checkout:])
					continue
				}
				if at += i; at > ralph {
					t.Errorf("%q comes after ralph's step", w)
				}
			}
			if strings.Contains(got, "secrets.X") {
				t.Errorf("init copied an expression from the repository's files into the workflow")
			}
			var doc map[string]any
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			cb, _ := os.ReadFile(filepath.Join(e.dir, ".github", "ralph.yml"))
			cfg, err := config.Parse(".github/ralph.yml", cb)
			if err != nil {
				t.Fatalf("the written config does not parse: %v\n%s", err, cb)
			}
			if !slices.Equal(cfg.Verify, c.verify) {
				t.Errorf("verify = %q, want %q", cfg.Verify, c.verify)
			}
			// Run again: the files are as init writes them, nothing changes.
			if code := e.run("init", "--agent", "claude"); code != 0 || e.stdout.String() != "" {
				t.Errorf("second init: exit %d: %s %s", code, e.stdout, e.stderr)
			}
		})
	}
}

// The setup steps init may write are pinned like every other action (TestActionsPinnedBySHA reads
// this rendering too, through the examples; here every setup action is named at once).
func TestSetupActionsArePinned(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/action-pins.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{setupGo, setupNode, setupPython, setupJava, setupPnpm} {
		repo, rest, _ := strings.Cut(ref, "@")
		sha, version, _ := strings.Cut(rest, " # ")
		if !strings.Contains(string(b), repo+" "+sha+" "+version+"\n") {
			t.Errorf("%s is not the pin testdata/action-pins.txt lists", ref)
		}
	}
}
