package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
)

// The step's caches are under its HOME, whatever ralph's environment names (the job's or the person's
// caches are never the agent's to write), agent.env may set its own, and the job's Go module downloads
// seed the step's module cache as a read-only proxy before the network.
func TestStepCaches(t *testing.T) {
	t.Parallel()
	jobHome := t.TempDir()
	dl := filepath.Join(jobHome, "go", "pkg", "mod", "cache", "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	home := "/agents/7/home"
	base := []string{"HOME=" + jobHome, "GOCACHE=" + jobHome + "/.cache/go-build", "npm_config_cache=" + jobHome + "/.npm", "GOPROXY=https://goproxy.example"}
	yes := func(string) bool { return true }
	env := stepCaches(base, nil, home, yes)
	want := map[string]string{
		"XDG_CACHE_HOME": home + "/.cache", "GOCACHE": home + "/.cache/go-build", "GOMODCACHE": home + "/go/pkg/mod",
		"npm_config_cache": home + "/.npm", "PIP_CACHE_DIR": home + "/.cache/pip", "GOPROXY": "file://" + dl + ",https://goproxy.example",
	}
	for k, v := range want {
		if got := agent.Getenv(env, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(env) != len(want) {
		t.Errorf("env = %q", env)
	}
	// GOMODCACHE and GOPATH name the job's module cache first.
	mod := filepath.Join(t.TempDir(), "mod")
	if err := os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := jobModuleDownloads(append(slices.Clone(base), "GOMODCACHE="+mod)); got != filepath.Join(mod, "cache", "download") {
		t.Errorf("with GOMODCACHE: %q", got)
	}
	// A module cache the agent's uid cannot read, or none, seeds nothing; the default proxy follows the file.
	if g := agent.Getenv(stepCaches(base, nil, home, func(string) bool { return false }), "GOPROXY"); g != "" {
		t.Errorf("GOPROXY = %q with an unreadable module cache", g)
	}
	if g := agent.Getenv(stepCaches([]string{"HOME=" + jobHome}, nil, home, yes), "GOPROXY"); g != "file://"+dl+",https://proxy.golang.org,direct" {
		t.Errorf("GOPROXY = %q", g)
	}
	if g := agent.Getenv(stepCaches([]string{"HOME=" + t.TempDir()}, nil, home, yes), "GOPROXY"); g != "" {
		t.Errorf("GOPROXY = %q without a module cache", g)
	}
	// agent.env's own setting stands.
	if g := stepCaches(base, map[string]string{"GOCACHE": "/mine"}, home, yes); agent.Getenv(g, "GOCACHE") != "" {
		t.Errorf("stepCaches set GOCACHE over agent.env's: %q", g)
	}
}
