package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
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

// buildCacheSeedLimit is the largest job's Go build cache ralph copies into a step's (seedBuildCache):
// every step pays for the copy (53 MB took about 1.4 s in the view, on a 2-core machine shared with
// other work), whether or not it builds.
const buildCacheSeedLimit = 256 << 20

// seedBuildCache copies the job's Go build cache into the step's (its HOME's .cache/go-build, stepCaches'
// GOCACHE) before the agent runs, so that the step's builds start from what the job restored rather
// than from nothing: Go cannot read a build cache beneath the one it writes. Only in the Action, where the
// job's cache is this repository's (a person's own cache holds their other projects, which the agent
// must not read), only when agent.env leaves GOCACHE to ralph, and only up to buildCacheSeedLimit. A
// failure leaves the step with what was copied (Go rebuilds what it misses) and says so.
func (r *Session) seedBuildCache(ws *workspace.Workspace) {
	if _, set := r.cfg.Agent.Env["GOCACHE"]; set || agent.Getenv(r.baseEnv, "GITHUB_ACTIONS") != "true" {
		return
	}
	src := jobBuildCache(r.baseEnv)
	if src == "" {
		return
	}
	n, err := ws.SeedHome(filepath.Join(".cache", "go-build"), src, buildCacheSeedLimit)
	switch {
	case errors.Is(err, workspace.ErrSeedTooLarge):
		r.log.Infof("the job's Go build cache (%s, %d MB) is larger than the %d MB ralph copies into a step: the step's starts empty", src, n>>20, buildCacheSeedLimit>>20)
	case err != nil:
		r.log.Warnf("copying the job's Go build cache into the step's: %v; Go rebuilds what it misses", err)
	case n > 0:
		r.log.Infof("the step's Go build cache starts from the job's (%s, %d MB)", src, n>>20)
	}
}

// jobBuildCache is the job's Go build cache (base's GOCACHE, else XDG_CACHE_HOME's or HOME's
// .cache/go-build), "" when it names none.
func jobBuildCache(base []string) string {
	dir := agent.Getenv(base, "GOCACHE")
	if dir == "" {
		cache := agent.Getenv(base, "XDG_CACHE_HOME")
		if cache == "" {
			if home := agent.Getenv(base, "HOME"); home != "" {
				cache = filepath.Join(home, ".cache")
			}
		}
		if cache != "" {
			dir = filepath.Join(cache, "go-build")
		}
	}
	if dir == "off" || !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// agentReads says whether the agent's uid may read and enter dir (always, when it is ralph's own uid).
func (r *Session) agentReads(dir string) bool {
	if !r.sandbox.Separate {
		return true
	}
	uid, gid := r.sandbox.UID, r.sandbox.GID
	if uid == 0 {
		uid, gid = sandbox.AgentUID, sandbox.AgentGID
	}
	return sandbox.CanReach(dir, uid, gid)
}
