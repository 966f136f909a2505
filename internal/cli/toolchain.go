package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// The setup actions init writes before ralph's step, pinned by commit SHA (testdata/action-pins.txt).
const (
	setupGo     = "actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e # v7.0.0"
	setupNode   = "actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0"
	setupPython = "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0"
	setupJava   = "actions/setup-java@b6effb05e454b25005698d916606bdc6ffcbf961 # v5.7.0"
	setupPnpm   = "pnpm/action-setup@fe02b34f77f8bc703788d5817da081398fad5dd2 # v4.0.0"
)

// toolchains is what a repository's files say it needs: the workflow steps that set its toolchains up
// before ralph's step (each a YAML list item indented for the job's steps:), the verify commands that
// run its tests, and one line per toolchain found for init's output.
type toolchains struct {
	Steps  []string
	Verify []string
	Found  []string
}

// A version init writes into the workflow: digits, letters and the range operators setup actions take.
// Anything else in a file (a template, a typo) is not copied; the action's default is written instead.
var versionRe = regexp.MustCompile(`^[0-9A-Za-z.*^~<>=][0-9A-Za-z.*^~<>=|, -]{0,40}$`)

func cleanVersion(v string) string {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), `"'`))
	if !versionRe.MatchString(v) {
		return ""
	}
	return v
}

// detectToolchains reads the files at the root of the checkout (through dir: nothing outside it) and says
// which setup steps and tests they call for: go.mod, package.json with its lock file, pyproject.toml or
// requirements.txt, pom.xml or build.gradle(.kts), Cargo.toml.
func detectToolchains(dir *os.Root) (toolchains, error) {
	var t toolchains
	read := func(name string) (string, bool, error) {
		b, err := dir.ReadFile(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", false, nil
		case err != nil:
			return "", false, fmt.Errorf("reading %s to choose the setup steps: %w", name, err)
		}
		return string(b), true, nil
	}
	exists := func(name string) bool {
		st, err := dir.Stat(name)
		return err == nil && st.Mode().IsRegular()
	}
	step := func(lines ...string) { t.Steps = append(t.Steps, "      "+strings.Join(lines, "\n        ")) }

	// Go: setup-go reads the go.mod's go and toolchain lines itself.
	if gomod, ok, err := read("go.mod"); err != nil {
		return t, err
	} else if ok {
		v := goVersion(gomod)
		step("- name: Go "+v+" (go.mod)", "uses: "+setupGo, "with:", "  go-version-file: go.mod")
		t.Verify = append(t.Verify, "go test ./...")
		t.Found = append(t.Found, "go.mod: Go "+v)
	}

	// Node: the lock file names the package manager; .nvmrc or engines.node the version.
	if pkg, ok, err := read("package.json"); err != nil {
		return t, err
	} else if ok {
		var p struct {
			Engines struct {
				Node string `json:"node"`
			} `json:"engines"`
			Scripts        map[string]string `json:"scripts"`
			PackageManager string            `json:"packageManager"`
		}
		if err := json.Unmarshal([]byte(pkg), &p); err != nil {
			return t, fmt.Errorf("package.json is not JSON (%v): fix it, then run gh ralph init again", err)
		}
		pm, install := "", "npm install"
		switch {
		case exists("pnpm-lock.yaml"):
			pm, install = "pnpm", "pnpm install --frozen-lockfile"
		case exists("yarn.lock"):
			pm, install = "yarn", "yarn install --frozen-lockfile"
		case exists("package-lock.json") || exists("npm-shrinkwrap.json"):
			pm, install = "npm", "npm ci"
		}
		if pm == "pnpm" {
			if strings.HasPrefix(p.PackageManager, "pnpm@") {
				step("- uses: " + setupPnpm) // reads packageManager
			} else {
				step("- uses: "+setupPnpm, "with:", "  version: 10")
			}
		}
		with, v := "  node-version: lts/*", "LTS"
		if exists(".nvmrc") {
			with, v = "  node-version-file: .nvmrc", ".nvmrc"
		} else if ev := cleanVersion(p.Engines.Node); ev != "" {
			with, v = "  node-version: "+yamlString(ev), ev
		}
		lines := []string{"- name: Node " + v, "uses: " + setupNode, "with:", with}
		if pm != "" {
			lines = append(lines, "  cache: "+pm)
		}
		step(lines...)
		t.Verify = append(t.Verify, install)
		run := "npm"
		if pm != "" {
			run = pm
		}
		if test := p.Scripts["test"]; test != "" && !strings.Contains(test, "no test specified") {
			t.Verify = append(t.Verify, run+" test")
		}
		t.Found = append(t.Found, "package.json: Node "+v+", "+run)
	}

	// Python: setup-python reads .python-version or pyproject.toml's requires-python.
	pyproject, hasPyproject, err := read("pyproject.toml")
	if err != nil {
		return t, err
	}
	hasReqs := exists("requirements.txt")
	if hasPyproject || hasReqs {
		with, v := "  python-version: \"3.x\"", "3"
		switch {
		case exists(".python-version"):
			with, v = "  python-version-file: .python-version", ".python-version"
		case hasPyproject && regexp.MustCompile(`(?m)^\s*requires-python\s*=`).MatchString(pyproject):
			with, v = "  python-version-file: pyproject.toml", "pyproject.toml's requires-python"
		}
		lines := []string{"- name: Python " + v, "uses: " + setupPython, "with:", with}
		install := "python -m pip install pytest"
		if hasReqs {
			lines = append(lines, "  cache: pip")
			install += " -r requirements.txt"
		}
		step(lines...)
		// The agent reads the job's Python and cannot install into it: the packages go in before ralph's step.
		step("- name: Python packages for the tests", "run: "+install)
		t.Verify = append(t.Verify, "python -m pytest")
		t.Found = append(t.Found, "Python "+v)
	}

	// Java: Maven or Gradle, Temurin at the version the build names.
	pom, hasPom, err := read("pom.xml")
	if err != nil {
		return t, err
	}
	gradle, hasGradle, err := read("build.gradle")
	if err != nil {
		return t, err
	}
	if !hasGradle {
		if gradle, hasGradle, err = read("build.gradle.kts"); err != nil {
			return t, err
		}
	}
	if hasPom || hasGradle {
		tool, cache, test := "Maven", "maven", "mvn -B test"
		v := javaVersion(pom, `<maven\.compiler\.release>\s*([0-9]+)`, `<release>\s*([0-9]+)`, `<java\.version>\s*([0-9]+)`, `<maven\.compiler\.source>\s*(?:1\.)?([0-9]+)`)
		if hasPom && exists("mvnw") {
			test = "./mvnw -B test"
		}
		if !hasPom {
			tool, cache, test = "Gradle", "gradle", "gradle test"
			v = javaVersion(gradle, `JavaLanguageVersion\.of\(\s*([0-9]+)`, `JavaVersion\.VERSION_(?:1_)?([0-9]+)`, `(?:source|target)Compatibility\s*=\s*['"]?(?:1\.)?([0-9]+)`)
			if exists("gradlew") {
				test = "./gradlew test"
			}
		}
		with := "  java-version: \"" + v + "\""
		if exists(".java-version") {
			with, v = "  java-version-file: .java-version", ".java-version"
		}
		step("- name: Java "+v+" ("+tool+")", "uses: "+setupJava, "with:", "  distribution: temurin", with, "  cache: "+cache)
		t.Verify = append(t.Verify, test)
		t.Found = append(t.Found, tool+": Java "+v)
	}

	// Rust: the runner has rustup; rust-toolchain.toml names the toolchain, which rustup installs.
	if exists("Cargo.toml") {
		if exists("rust-toolchain.toml") || exists("rust-toolchain") {
			step("- name: Rust (rust-toolchain.toml)", "run: rustup toolchain install")
			t.Found = append(t.Found, "Cargo.toml: Rust (rust-toolchain.toml)")
		} else {
			step("- name: Rust stable", "run: rustup toolchain install stable --profile minimal && rustup default stable")
			t.Found = append(t.Found, "Cargo.toml: Rust stable")
		}
		t.Verify = append(t.Verify, "cargo test")
	}
	return t, nil
}

// goVersion is the version go.mod's toolchain line, or else its go line, names.
func goVersion(gomod string) string {
	v := ""
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "toolchain" {
			if c := cleanVersion(strings.TrimPrefix(f[1], "go")); c != "" {
				return c
			}
		}
		if len(f) == 2 && f[0] == "go" && v == "" {
			v = cleanVersion(f[1])
		}
	}
	if v == "" {
		return "as go.mod says"
	}
	return v
}

// javaVersion is the first version one of the patterns finds, or 21 (the current LTS Temurin).
func javaVersion(text string, patterns ...string) string {
	for _, p := range patterns {
		if m := regexp.MustCompile(p).FindStringSubmatch(text); m != nil {
			return m[1]
		}
	}
	return "21"
}

// yamlString quotes a cleaned version for YAML (cleanVersion lets no quote or backslash through).
func yamlString(s string) string { return `"` + s + `"` }
