package workspace

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

func commonDirOf(source string) (string, error) { return git.CommonDir(source) }

// Places is where one run keeps ralph's repository and the agents' areas, and who the agent is.
type Places struct {
	GitDir string
	Agents string
	Owner  Owner // zero: the agent is ralph's own user
	temp   string
}

// NewPlaces chooses the places for a run. As root (the Action's container), the agent runs as uid:gid and
// everything lives in a fresh directory under the system's temporary directory that belongs to root: the
// agent may pass through it to its own area, but ralph's repository (objects, index files, config) is
// closed to it, neither readable nor writable (the agent's copy has a repository of its own, which borrows
// nothing). Otherwise the agent is ralph's own user: ralph's repository is kept in cacheDir between runs,
// and Landlock is what keeps the agent from writing it.
func NewPlaces(cacheDir string, uid, gid int) (Places, error) {
	if os.Geteuid() != 0 {
		if err := os.MkdirAll(cacheDir, 0o700); err != nil {
			return Places{}, fmt.Errorf("creating ralph's cache directory: %w", err)
		}
		return Places{GitDir: filepath.Join(cacheDir, "git"), Agents: filepath.Join(cacheDir, "agents")}, nil
	}
	root, err := os.MkdirTemp("", "ralph-")
	if err != nil {
		return Places{}, err
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return Places{}, err
	}
	p := Places{GitDir: filepath.Join(root, "git"), Agents: filepath.Join(root, "agents"), Owner: Owner{UID: uid, GID: gid}, temp: root}
	if err := os.Mkdir(p.GitDir, 0o700); err != nil {
		return Places{}, err
	}
	if err := os.Mkdir(p.Agents, 0o711); err != nil {
		return Places{}, err
	}
	return p, nil
}

// Close removes what the run made that is not kept.
func (p Places) Close() error {
	if p.temp == "" {
		return nil
	}
	return removeAll(p.temp)
}

// CacheDir is where gh ralph keeps ralph's repository for the checkout at source, between runs: a
// directory of its own under the user's cache directory, named after the checkout. getenv reads ralph's
// environment (nil: an empty one) for that directory, as os.UserCacheDir does: XDG_CACHE_HOME, else
// HOME's; without either, TMPDIR or /tmp.
func CacheDir(source string, getenv func(string) string) (string, error) {
	common, err := commonDirOf(source)
	if err != nil {
		return "", err
	}
	cache := userCacheDir(getenv)
	sum := sha256.Sum256([]byte(common))
	name := filepath.Base(filepath.Dir(common)) // the checkout's directory name, for people who look
	if filepath.Base(common) != ".git" {
		name = strings.TrimSuffix(filepath.Base(common), ".git")
	}
	return filepath.Join(cache, "ralph", fmt.Sprintf("%s-%x", name, sum[:6])), nil
}

// userCacheDir is os.UserCacheDir of the environment getenv reads (nil: an empty one), with TMPDIR's or
// /tmp in place of its error.
func userCacheDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = getenv("LocalAppData")
	case "darwin", "ios":
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, "Library", "Caches")
		}
	default:
		dir = getenv("XDG_CACHE_HOME")
		if !filepath.IsAbs(dir) {
			dir = ""
			if home := getenv("HOME"); home != "" {
				dir = filepath.Join(home, ".cache")
			}
		}
	}
	if dir != "" {
		return dir
	}
	if tmp := getenv("TMPDIR"); tmp != "" {
		return tmp
	}
	return "/tmp"
}

// Setup is what both doors give a run: ralph's repository for the checkout and the agent's boundary.
type Setup struct {
	Checkout  string
	Auth      git.Auth
	Protected func(path string) string
	// Branches is branch_prefix: ralph pushes no branch outside it.
	Branches string
	// Getenv reads ralph's environment, where the user's cache directory is (CacheDir); nil: an empty one.
	Getenv func(string) string
	// Writable are more directories the agent may write (RALPH_AGENT_WRITABLE).
	Writable []string
	// ReadOnly are more paths the agent may read and run but not write (RALPH_AGENT_READABLE).
	ReadOnly        []string
	RequireLandlock bool
	// Runner runs ralph's git; nil: git.ExecRunner{}.
	Runner git.Runner
}

// Open opens ralph's repository for the checkout, in the places NewPlaces chooses (as root, a user of the
// agent's own, reserved for this run: sandbox.ReserveIDs), and the boundary its agent runs in. close removes what the run made
// that is not kept; call it when the run ends.
func (s Setup) Open(ctx context.Context) (store *Store, sb sandbox.Config, close func() error, err error) {
	cache, err := CacheDir(s.Checkout, s.Getenv)
	if err != nil {
		return nil, sandbox.Config{}, nil, err
	}
	uid, gid, release, err := sandbox.ReserveIDs()
	if err != nil {
		return nil, sandbox.Config{}, nil, err
	}
	places, err := NewPlaces(cache, uid, gid)
	if err != nil {
		release()
		return nil, sandbox.Config{}, nil, err
	}
	store, err = Open(ctx, Options{
		GitDir: places.GitDir, Agents: places.Agents, Source: s.Checkout,
		Auth: s.Auth, Owner: places.Owner, Protected: s.Protected, Branches: s.Branches, Runner: s.Runner,
	})
	if err != nil {
		_ = places.Close()
		release()
		return nil, sandbox.Config{}, nil, err
	}
	sb = sandbox.Config{
		Separate: places.Owner.UID != 0, UID: places.Owner.UID, GID: places.Owner.GID,
		Writable: s.Writable, ReadOnly: s.ReadOnly, RequireLandlock: s.RequireLandlock,
		// Both doors are whole programs that run nothing else while the agent runs.
		ReapDescendants: true,
	}
	// The uid stays the run's until its places are gone: nothing of its agent is left for another run's
	// agent of the same uid to meet.
	return store, sb, func() error { defer release(); return places.Close() }, nil
}
