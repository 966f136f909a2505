package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The README's main job on a fresh machine: gh-ralph demo takes one issue from its label to a pull request
// against a GitHub of its own, with nothing of the user's (no gh login, no repository, no key), and prints
// what a person sees on GitHub. golden: testdata/demo/demo.golden (-update rewrites it).
func TestDemo(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "demo")
	cmd.Dir = t.TempDir()
	// Only what a fresh machine has: no token, no gh, no GitHub of the test's.
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gh-ralph demo: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("the demo warned:\n%s", stderr.String())
	}
	got := stdout.String()
	for _, re := range []struct{ from, to string }{
		{`127\.0\.0\.1:\d+`, "HOST"},
		{`\d{4}-\d{2}-\d{2}`, "DATE"},
		{`\d{2}:\d{2} UTC`, "TIME UTC"},
		{`\b[0-9a-f]{7}\b`, "SHA"},
	} {
		got = regexp.MustCompile(re.from).ReplaceAllString(got, re.to)
	}
	firstHourGoldenIn(t, "demo", "demo.golden", got)
}

// The README's build-and-test commands are what CI runs (.ci/run), so they stay true on a fresh machine.
func TestReadmeSetUpIsWhatCIRuns(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Build and test ralph\n")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no ```sh block under ## Build and test ralph")
	}
	var n int
	for _, line := range strings.Split(block, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, cmd := range strings.Split(line, " && ") {
			n++
			if !strings.Contains(string(ci), "\n"+cmd+"\n") {
				t.Errorf("the README's %q is not a line .ci/run runs", cmd)
			}
		}
	}
	if n < 3 {
		t.Errorf("the README's block holds %d commands, want the build, the demo and the tests", n)
	}
}
