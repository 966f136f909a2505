package ledger

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// remote is a bare repository with one commit on main, and n clones of ralph's repository on it: n runs on
// as many machines.
func remote(t *testing.T, n int) []*git.Repo {
	t.Helper()
	root := t.TempDir()
	origin := filepath.Join(root, "origin.git")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x", "PATH=/usr/bin:/bin:/usr/local/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(root, "init", "-q", "--bare", "-b", "main", origin)
	var repos []*git.Repo
	for i := 0; i < n; i++ {
		r, err := git.Open(context.Background(), git.ExecRunner{Env: []string{"HOME=" + root}}, filepath.Join(root, "ralph", string(rune('a'+i))), "", origin, git.Auth{})
		if err != nil {
			t.Fatal(err)
		}
		repos = append(repos, r)
	}
	return repos
}

func TestDay(t *testing.T) {
	t.Parallel()
	repo := remote(t, 1)[0]
	now := time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC)
	l := &Ledger{Repo: repo, Author: git.Signature{Name: "ralph", Email: "r@x"}, Now: func() time.Time { return now }}
	ctx := context.Background()
	if d, err := l.Today(ctx); err != nil || d != (Day{Date: "2026-11-23"}) {
		t.Fatalf("a day with no ledger = %+v, %v", d, err)
	}
	if _, err := l.Add(ctx, 1.25, 1000, "#1 research"); err != nil {
		t.Fatal(err)
	}
	d, err := l.Add(ctx, 0.5, 200, "#2 plan")
	if err != nil || d.CostUSD != 1.75 || d.Tokens != 1200 || d.Runs != 2 {
		t.Fatalf("Add = %+v, %v", d, err)
	}
	if got, _ := l.Today(ctx); got != d {
		t.Errorf("Today = %+v, want %+v", got, d)
	}
	// The next UTC day starts from zero.
	now = now.Add(2 * time.Hour)
	if d, _ := l.Today(ctx); d != (Day{Date: "2026-11-24"}) {
		t.Errorf("the next day = %+v, want nothing spent", d)
	}
	if d, err := l.Add(ctx, 2, 10, "#1 implement"); err != nil || d.CostUSD != 2 || d.Runs != 1 {
		t.Errorf("the next day's first run = %+v, %v", d, err)
	}
}

// Runs on several machines adding at once lose nothing: the ref moves by compare-and-swap.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	const runs = 6
	repos := remote(t, runs)
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i, r := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &Ledger{Repo: r, Author: git.Signature{Name: "ralph", Email: "r@x"}}
			_, err := l.Add(context.Background(), 0.25, 100, "#"+strings.Repeat("1", i+1))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			t.Logf("a run could not record: %v", err)
		}
	}
	d, err := (&Ledger{Repo: repos[0]}).Today(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.25 * float64(runs-failed); math.Abs(d.CostUSD-want) > 1e-9 || d.Runs != runs-failed || failed > 0 {
		t.Errorf("the day = %+v after %d runs (%d could not record), want every recorded run counted once", d, runs, failed)
	}
}

// A step reads the day before its agent runs and adds after: when nobody wrote in between, the add is one
// push; when somebody did, it reads again.
func TestAddAfterToday(t *testing.T) {
	t.Parallel()
	repos := remote(t, 2)
	fetches := 0
	a := &Ledger{Repo: countingRepo{repos[0], &fetches}, Author: git.Signature{Name: "ralph", Email: "r@x"}}
	b := &Ledger{Repo: repos[1], Author: git.Signature{Name: "ralph", Email: "r@x"}}
	ctx := context.Background()
	if _, err := a.Today(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(ctx, 1, 1, "#1"); err != nil || fetches != 1 {
		t.Fatalf("Add after Today: %v, %d fetches; want the one of Today", err, fetches)
	}
	if _, err := a.Today(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, 2, 2, "#2"); err != nil { // another run, in between
		t.Fatal(err)
	}
	d, err := a.Add(ctx, 4, 4, "#1")
	if err != nil || d.CostUSD != 7 || d.Runs != 3 {
		t.Errorf("Add after another run's = %+v, %v; want all three counted", d, err)
	}
}

type countingRepo struct {
	*git.Repo
	fetches *int
}

func (c countingRepo) FetchRef(ctx context.Context, ref string) (string, bool, error) {
	*c.fetches++
	return c.Repo.FetchRef(ctx, ref)
}
