package engine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// stepCaches are the cache variables of the agent and the verify commands of one step: every tool's
// writable cache is under the step's HOME (Go's build and module caches, npm's, pip's, and
// XDG_CACHE_HOME for the rest), so the agent's runs and the verify commands of the step share what they
// built, no cache of the person's or the job's is written, and all of it is removed when the step ends.
// Go's modules are seeded read-only from the job's module cache (base's GOMODCACHE, else GOPATH's or
// HOME's go/pkg/mod), which Go reads as a module proxy before the network: the modules the job restored
// are not downloaded again. readable says whether the agent's uid may read a directory. A variable
// agent.env sets is left as it is.
func stepCaches(base []string, set map[string]string, home string, readable func(string) bool) []string {
	cache := filepath.Join(home, ".cache")
	vars := [][2]string{
		{"XDG_CACHE_HOME", cache},
		{"GOCACHE", filepath.Join(cache, "go-build")},
		{"GOMODCACHE", filepath.Join(home, "go", "pkg", "mod")},
		{"npm_config_cache", filepath.Join(home, ".npm")},
		{"PIP_CACHE_DIR", filepath.Join(cache, "pip")},
	}
	if dl := jobModuleDownloads(base); dl != "" && readable(dl) {
		proxy := agent.Getenv(base, "GOPROXY")
		if proxy == "" || proxy == "off" {
			proxy = "https://proxy.golang.org,direct"
		}
		vars = append(vars, [2]string{"GOPROXY", "file://" + filepath.ToSlash(dl) + "," + proxy})
	}
	var env []string
	for _, v := range vars {
		if _, ok := set[v[0]]; ok {
			continue
		}
		env = append(env, v[0]+"="+v[1])
	}
	return env
}

// jobModuleDownloads is the download directory of the job's Go module cache (a module proxy's layout),
// "" when there is none.
func jobModuleDownloads(base []string) string {
	mod := agent.Getenv(base, "GOMODCACHE")
	if mod == "" {
		gopath := agent.Getenv(base, "GOPATH")
		if gopath == "" {
			if home := agent.Getenv(base, "HOME"); home != "" {
				gopath = filepath.Join(home, "go")
			}
		}
		if first, _, _ := strings.Cut(gopath, string(os.PathListSeparator)); first != "" {
			mod = filepath.Join(first, "pkg", "mod")
		}
	}
	if mod == "" || !filepath.IsAbs(mod) {
		return ""
	}
	dl := filepath.Join(mod, "cache", "download")
	if st, err := os.Stat(dl); err != nil || !st.IsDir() {
		return ""
	}
	return dl
}

// agentReads says whether the agent's uid may read and enter dir (always, when it is ralph's own uid).
func (r *runner) agentReads(dir string) bool {
	if !r.sandbox.Separate {
		return true
	}
	uid, gid := r.sandbox.UID, r.sandbox.GID
	if uid == 0 {
		uid, gid = sandbox.AgentUID, sandbox.AgentGID
	}
	return sandbox.CanReach(dir, uid, gid)
}
