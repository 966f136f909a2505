package preset

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the per-agent <preset>/action.yml files from action.yml")

// repoFile is a file of the repository, by its slash-separated path from the repository's root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestListIsWhole(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, p := range List() {
		if err := Check(p); err != nil {
			t.Error(err)
		}
		for _, k := range []string{"name " + p.Name, "program " + p.Program, "package " + p.Package} {
			if seen[k] {
				t.Errorf("two presets have the %s", k)
			}
			seen[k] = true
		}
		if p.Name == "command" {
			t.Error("command is the preset of the user's own program, not a name a CLI's preset may take")
		}
	}
}

// A preset with a required field left out is refused, and the refusal names the field.
func TestCheckNamesTheFieldLeftOut(t *testing.T) {
	t.Parallel()
	required := []string{"Name", "Title", "Program", "Package", "Version", "Vendor", "KeyVars", "Args", "Stream", "ConfigPaths"}
	for _, p := range List() {
		for _, field := range required {
			q := p
			f := reflect.ValueOf(&q).Elem().FieldByName(field)
			if !f.IsValid() {
				t.Fatalf("Preset has no field %s", field)
			}
			f.Set(reflect.Zero(f.Type()))
			err := Check(q)
			if err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("%s without %s: Check = %v, want an error naming %s", p.Name, field, err, field)
			}
		}
	}
	bad := List()[0]
	bad.Vendor = "acme"
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), `"acme"`) {
		t.Errorf("unknown vendor: Check = %v", err)
	}
	bad = List()[0]
	bad.Home = []File{{Path: "../escape", Content: "x"}}
	if err := Check(bad); err == nil {
		t.Error("a HOME file outside HOME passed Check")
	}
}

func TestJoin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := Join(c.in, "or"); got != c.want {
			t.Errorf("Join(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The files that cannot be Go (the Dockerfile, the image script, the container test, the release workflow,
// the README) name every preset as the list has it; each failure says what is missing where.
func TestRepositoryFilesFollowTheList(t *testing.T) {
	t.Parallel()
	dockerfile := repoFile(t, "Dockerfile")
	image := repoFile(t, "script/image.sh")
	container := repoFile(t, "script/container-test.sh")
	release := repoFile(t, ".github/workflows/release.yml")
	readme := repoFile(t, "README.md")
	agents := regexp.MustCompile(`(?m)^agents=\(([^)]*)\)`).FindStringSubmatch(image)
	if agents == nil || !slices.Equal(strings.Fields(agents[1]), Names()) {
		t.Errorf("script/image.sh: agents=(…) is %q, want the presets %q", agents, Names())
	}
	pins := regexp.MustCompile(`(?m)^npm_packages=\(([^)]*)\)`).FindStringSubmatch(image)
	for _, want := range []string{"mapfile -t agents < <(script/image.sh agents)\n", `targets=(slim "${agents[@]}")`, `for target in "${agents[@]}"; do`, `$a=ralph-ci:$a`} {
		if !strings.Contains(container, want) {
			t.Errorf("script/container-test.sh does not take its agents from script/image.sh agents: no %q", want)
		}
	}
	// The README's sentences that list the presets, with its line breaks as spaces.
	flat := strings.Join(strings.Fields(readme), " ")
	quoted := func(sep string) string { return "`" + strings.Join(Names(), "`"+sep+"`") + "`" }
	for _, want := range []string{
		"asks which agent runs the steps (" + quoted(", ") + ", or `command` with a program of your own)",
		"preset: claude # or " + strings.Join(Names()[1:], ", ") + ", or command with your own program",
		"is a target of the `Dockerfile` (`slim`, " + quoted(", ") + ").",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("README.md does not list the presets as the list has them: no %q", want)
		}
	}
	for _, p := range List() {
		for _, path := range p.ConfigPaths {
			if !strings.Contains(readme, "`"+path+"`") {
				t.Errorf("README.md (protected paths): preset %s's configuration path %q is missing", p.Name, path)
			}
		}
		for _, want := range []struct{ file, text, in string }{
			{"Dockerfile", "FROM fetch AS cli-" + p.Name + "\n", dockerfile},
			{"Dockerfile", "RUN image.sh cli " + p.Name + ` "$TARGETARCH" /out`, dockerfile},
			{"Dockerfile", "FROM slim AS " + p.Name + "\n", dockerfile},
			{"Dockerfile", "COPY --from=cli-" + p.Name + " /out/ /ralph/", dockerfile},
			{"script/image.sh", "[" + p.Name + "/amd64]=", image},
			{"script/image.sh", "[" + p.Name + "/arm64]=", image},
			{".github/workflows/release.yml", " " + p.Name + ":" + p.Name + "/action.yml", release},
			{"README.md (the presets' table)", "| `" + p.Name + "` | `" + p.Program + " ", readme},
			{"README.md (the actions' table)", "| `" + p.Name + "` | `ralph-dev/gh-ralph/" + p.Name + "@v1` | `ghcr.io/ralph-dev/gh-ralph:<VERSION>-" + p.Name + "` |", readme},
			{"README.md (the pinned versions)", p.Package + "@" + p.Version, readme},
		} {
			if !strings.Contains(want.in, want.text) {
				t.Errorf("%s: preset %s is missing: no %q", want.file, p.Name, want.text)
			}
		}
		if pins == nil || !slices.Contains(strings.Fields(pins[1]), p.Package+"@"+p.Version) {
			t.Errorf("script/image.sh: preset %s is missing from npm_packages=(…): no %s@%s", p.Name, p.Package, p.Version)
		}
	}
}

// ActionOf is an agent's action.yml: the root action.yml with the agent's name, description and image (the
// same action, so that the inputs, outputs and how it runs cannot drift apart).
func actionOf(t *testing.T, root string, p Preset) string {
	t.Helper()
	lines := strings.SplitAfter(root, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "name: "):
			l = fmt.Sprintf("name: ralph (%s)\n", strings.TrimPrefix(p.Title, "the "))
		case strings.HasPrefix(l, "description: "):
			l = strings.Replace(l, "with an AI coding agent,", "with "+p.Title+" as the agent,", 1)
		case strings.HasPrefix(l, "# The image the release workflow publishes"):
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#") && !strings.HasPrefix(lines[i+1], "# A composite action") {
				i++
			}
			l = "# The image the release workflow publishes for this version (VERSION) with the CLI of agent.preset " + p.Name + "\n" +
				"# and no other agent's CLI. The same action as ../action.yml, whose image has none.\n"
		}
		// The composite's steps run ralph's script from the repository's root, one directory up.
		l = strings.ReplaceAll(l, `"$GITHUB_ACTION_PATH/script/`, `"$GITHUB_ACTION_PATH/../script/`)
		out = append(out, imageRef.ReplaceAllString(l, "${1}-"+p.Name))
	}
	return strings.Join(out, "")
}

// digest is an image's digest in an action file.
var digest = regexp.MustCompile(`@sha256:[0-9a-f]{64}`)

// imageRef is the slim image's reference in action.yml.
var imageRef = regexp.MustCompile(`(ghcr\.io/ralph-dev/gh-ralph:[0-9][0-9A-Za-z.+-]*)`)

// Each agent's action is the root action.yml with its name, description and image: go test -update writes
// them from it.
func TestAgentActionsAreTheRootAction(t *testing.T) {
	root := repoFile(t, "action.yml")
	if !imageRef.MatchString(root) {
		t.Fatal("action.yml names no image ghcr.io/ralph-dev/gh-ralph:<VERSION>")
	}
	for _, p := range List() {
		path := p.Name + "/action.yml"
		want := actionOf(t, root, p)
		if *update {
			if err := os.MkdirAll(filepath.Join("..", "..", p.Name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "..", filepath.FromSlash(path)), []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("preset %s has no action: %v (go test ./internal/preset -update writes it)", p.Name, err)
			continue
		}
		// Each image has a digest of its own once the release writes them (script/pin-images.sh).
		if got := digest.ReplaceAllString(string(b), "@sha256:…"); got != digest.ReplaceAllString(want, "@sha256:…") {
			t.Errorf("%s is not action.yml with %s's name, description and image (go test ./internal/preset -update rewrites it):\n%s", path, p.Name, lineDiff(got, want))
		}
	}
}

// lineDiff names the first line where got and want differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, gl, wl)
		}
	}
	return ""
}

// A CLI installed from a lockfile (script/image.sh's lockfile=(…), for pi) is pinned whole: the lockfile's
// package is the preset's at its version, and every package in it has a sha512 integrity and comes from
// the npm registry, so that npm ci can fetch nothing else.
func TestLockfilesPinEveryPackage(t *testing.T) {
	t.Parallel()
	image := repoFile(t, "script/image.sh")
	m := regexp.MustCompile(`(?ms)^declare -A lockfile=\((.*?)^\)`).FindStringSubmatch(image)
	if m == nil {
		t.Fatal("script/image.sh has no lockfile=(…)")
	}
	dirs := map[string]string{}
	for _, e := range regexp.MustCompile(`\[([a-z]+)/(amd64|arm64)\]=(\S+)`).FindAllStringSubmatch(m[1], -1) {
		dirs[e[1]] = e[3]
	}
	if len(dirs) == 0 {
		t.Fatal("script/image.sh's lockfile=(…) names no agent")
	}
	for name, dir := range dirs {
		p, ok := Lookup(name)
		if !ok {
			t.Errorf("script/image.sh installs %s from a lockfile, which is no preset", name)
			continue
		}
		for _, problem := range lockProblems(repoFile(t, "script/"+dir+"/package.json"), repoFile(t, "script/"+dir+"/package-lock.json"), p) {
			t.Errorf("script/%s: %s", dir, problem)
		}
	}
}

// lockProblems are what keeps a package.json and its lockfile from pinning preset p whole.
func lockProblems(packageJSON, lockJSON string, p Preset) []string {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version   string `json:"version"`
			Resolved  string `json:"resolved"`
			Integrity string `json:"integrity"`
			Link      bool   `json:"link"`
		} `json:"packages"`
	}
	if err := json.Unmarshal([]byte(packageJSON), &pkg); err != nil {
		return []string{"package.json: " + err.Error()}
	}
	if err := json.Unmarshal([]byte(lockJSON), &lock); err != nil {
		return []string{"package-lock.json: " + err.Error()}
	}
	var out []string
	if got := pkg.Dependencies[p.Package]; got != p.Version || len(pkg.Dependencies) != 1 {
		out = append(out, fmt.Sprintf("package.json depends on %v, want %s at exactly %s alone", pkg.Dependencies, p.Package, p.Version))
	}
	if lock.LockfileVersion < 2 {
		out = append(out, fmt.Sprintf("package-lock.json is of version %d, which npm ci reads without integrity per package", lock.LockfileVersion))
	}
	if got := lock.Packages["node_modules/"+p.Package].Version; got != p.Version {
		out = append(out, fmt.Sprintf("package-lock.json has %s at %q, want %s (run npm install --package-lock-only there)", p.Package, got, p.Version))
	}
	for key, e := range lock.Packages {
		if key == "" {
			continue
		}
		if e.Link || !strings.HasPrefix(e.Integrity, "sha512-") || !strings.HasPrefix(e.Resolved, "https://registry.npmjs.org/") {
			out = append(out, fmt.Sprintf("%s is not pinned: resolved %q, integrity %q, link %v", key, e.Resolved, e.Integrity, e.Link))
		}
	}
	return out
}

func TestLockProblems(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("pi")
	ok := `{"lockfileVersion":3,"packages":{"":{},"node_modules/` + p.Package + `":{"version":"` + p.Version + `","resolved":"https://registry.npmjs.org/x.tgz","integrity":"sha512-AA=="}`
	if got := lockProblems(`{"dependencies":{"`+p.Package+`":"`+p.Version+`"}}`, ok+`}}`, p); len(got) != 0 {
		t.Errorf("a whole lockfile: %q", got)
	}
	for _, bad := range []struct{ pkg, lock, want string }{
		{`{"dependencies":{"` + p.Package + `":"^` + p.Version + `"}}`, ok + `}}`, "package.json depends on"},
		{`{"dependencies":{"` + p.Package + `":"` + p.Version + `"}}`, ok + `,"node_modules/a":{"resolved":"https://registry.npmjs.org/a.tgz","integrity":"sha1-AA=="}}}`, "node_modules/a is not pinned"},
		{`{"dependencies":{"` + p.Package + `":"` + p.Version + `"}}`, ok + `,"node_modules/b":{"resolved":"https://example.com/b.tgz","integrity":"sha512-AA=="}}}`, "node_modules/b is not pinned"},
		{`{"dependencies":{"` + p.Package + `":"` + p.Version + `"}}`, ok + `,"node_modules/c":{"link":true}}}`, "node_modules/c is not pinned"},
	} {
		if got := strings.Join(lockProblems(bad.pkg, bad.lock, p), "; "); !strings.Contains(got, bad.want) {
			t.Errorf("lockProblems = %q, want %q", got, bad.want)
		}
	}
}
