package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cli/go-gh/v2/pkg/repository"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// clock is the fixed time of the test server and of the commands.
var clock = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// lockedBuffer is a writer a test can read while something writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testEnv is a repository on an Enterprise-style test server served over HTTPS on a random port (so the
// host carries a port, as GH_HOST=127.0.0.1:PORT), with a clone of it as the user's checkout.
type testEnv struct {
	t      *testing.T
	srv    *githubtest.Server
	env    map[string]string
	dir    string // the user's checkout
	home   string
	now    time.Time
	stdout *lockedBuffer
	stderr *lockedBuffer
	tty    bool
	// color: the terminal shows colour (on stdout and stderr); off, as with NO_COLOR.
	color bool
	// stdin is what the person types; ttyIn makes it a terminal (with tty, init asks).
	stdin string
	ttyIn bool
	// gh records the gh commands a command runs (gh secret set), as gh would run them: it reads stdin.
	gh [][]string
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvOf(t, false)
}

// newTestEnvOf is newTestEnv for a private repository, or not.
func newTestEnvOf(t *testing.T, private bool) *testEnv {
	t.Helper()
	now := clock
	srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true, Private: private, Now: func() time.Time { return now }})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.ServerURL, "https://")
	e := &testEnv{t: t, srv: srv, home: t.TempDir(), now: now, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	e.env = map[string]string{
		"GH_HOST": host, "GH_REPO": host + "/octo/demo", "GH_ENTERPRISE_TOKEN": "test-token", "SSL_CERT_FILE": ca,
		"HOME": e.home, "PATH": os.Getenv("PATH"),
	}
	e.dir = filepath.Join(t.TempDir(), "work")
	e.git("", "clone", "-q", srv.BareRepo, e.dir)
	return e
}

// asUser makes GET /user answer with login, as GitHub does for the token's owner.
func (e *testEnv) asUser(login string) {
	e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.Path != "/api/v3/user" {
			return false
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"login":"` + login + `","id":4242,"type":"User"}`))
		return true
	})
}

func (e *testEnv) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (e *testEnv) factory() *Factory {
	return &Factory{
		Getenv: func(k string) string { return e.env[k] },
		Environ: func() []string {
			var out []string
			for k, v := range e.env {
				out = append(out, k+"="+v)
			}
			return out
		},
		Stdin: strings.NewReader(e.stdin), Stdout: e.stdout, Stderr: e.stderr, Version: "test",
		StdinTTY: e.ttyIn, StdoutTTY: e.tty, StderrTTY: false, Color: e.color, ErrColor: e.color, Width: 100,
		RunGH: func(_ context.Context, args ...string) error {
			e.gh = append(e.gh, args)
			return nil
		},
		Dir: e.dir,
		Now: func() time.Time { return e.now },
		RepoFromRemotes: func() (repository.Repository, error) {
			return repository.Repository{}, errors.New("test: no remotes")
		},
		StoredToken:    func(string) string { return "" },
		ConfiguredHost: func() string { return "" },
	}
}

// run runs the command line and returns the exit code as main would.
func (e *testEnv) run(args ...string) int {
	e.t.Helper()
	e.stdout.b.Reset()
	e.stderr.b.Reset()
	return Exit(Execute(context.Background(), e.factory(), args), e.stderr)
}

// scrub replaces the server's random address, so output can be compared with golden files.
func (e *testEnv) scrub(s string) string {
	return strings.ReplaceAll(s, strings.TrimPrefix(e.srv.ServerURL, "https://"), "HOST")
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
