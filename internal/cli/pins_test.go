package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every uses: in the workflows ralph ships (the examples, what init writes, the release workflow, the
// README's snippets) pins an action by commit SHA with its version in a comment, and that SHA is the
// one testdata/action-pins.txt lists for the version. ralph's own action is the exception: init pins it
// to the commit of the release that writes the workflow (TestInitPinsRalph); the examples name its tag.
func TestActionsPinnedBySHA(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/action-pins.txt")
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{} // repo -> "sha version"
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && !strings.HasPrefix(line, "#") {
			pins[f[0]] = f[1] + " " + f[2]
		}
	}
	files := map[string]string{"init's workflow": string(renderWorkflow([]string{"ANTHROPIC_API_KEY"}, "ralph-dev/gh-ralph@v1"))}
	for _, g := range []string{"../../examples/*.yml", "../../.github/workflows/*.yml", "../../README.md"} {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = string(b)
		}
	}
	uses := regexp.MustCompile(`uses:\s*([^\s@]+)@(\S+)(\s+#\s*(\S+))?`)
	n := 0
	for name, text := range files {
		for _, m := range uses.FindAllStringSubmatch(text, -1) {
			repo, ref, version := m[1], m[2], m[4]
			n++
			if repo == "ralph-dev/gh-ralph" || strings.HasPrefix(repo, "ralph-dev/gh-ralph/") {
				if ref != "v1" {
					t.Errorf("%s: ralph's action at %q, want v1 in the examples", name, ref)
				}
				continue
			}
			want, ok := pins[repo]
			if !ok {
				t.Errorf("%s: %s is not in testdata/action-pins.txt", name, repo)
				continue
			}
			if got := ref + " " + version; got != want {
				t.Errorf("%s: uses %s@%s # %s, want %s@%s", name, repo, ref, version, repo, strings.Replace(want, " ", " # ", 1))
			}
		}
	}
	if n < 5 {
		t.Errorf("found only %d uses:", n)
	}
}

// A release build of gh ralph pins ralph's action to the commit it was built from, with its version.
func TestInitPinsRalph(t *testing.T) {
	t.Parallel()
	f := &Factory{Version: "1.2.3", Commit: strings.Repeat("ab", 20)}
	if got, want := f.actionRef("command"), "ralph-dev/gh-ralph@"+strings.Repeat("ab", 20)+" # v1.2.3"; got != want {
		t.Errorf("actionRef = %q, want %q", got, want)
	}
	// A build that is no release (go build in a clone past a tag, or with changes) pins nothing of its own.
	for _, f := range []*Factory{{Version: "dev", Commit: strings.Repeat("ab", 20)}, {Version: "1.2.3"},
		{Version: "1.0.1-0.20261125120000-abababababab", Commit: strings.Repeat("ab", 20)},
		{Version: "1.0.0+dirty", Commit: strings.Repeat("ab", 20)}} {
		if got := f.actionRef("claude"); got != "ralph-dev/gh-ralph/claude@v1" {
			t.Errorf("%+v: actionRef = %q", f, got)
		}
	}
}

// gh ralph version links a release's page only for a release: a build past a tag has none.
func TestVersionText(t *testing.T) {
	t.Parallel()
	commit := strings.Repeat("ab", 20)
	tests := []struct{ version, want string }{
		{"1.2.3", "gh ralph version 1.2.3 (commit abababa)\nhttps://github.com/ralph-dev/gh-ralph/releases/tag/v1.2.3\n"},
		{"v1.2.3", "gh ralph version 1.2.3 (commit abababa)\nhttps://github.com/ralph-dev/gh-ralph/releases/tag/v1.2.3\n"},
		{"dev", "gh ralph version dev (commit abababa)\n"},
		{"1.0.1-0.20261125120000-abababababab", "gh ralph version 1.0.1-0.20261125120000-abababababab (commit abababa), not a release\n"},
		{"1.0.0+dirty", "gh ralph version 1.0.0+dirty (commit abababa), not a release\n"},
	}
	for _, tt := range tests {
		if got := versionText(tt.version, commit); got != tt.want {
			t.Errorf("versionText(%q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}
