package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func client(t testing.TB, srv *githubtest.Server) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, Server: srv.ServerURL, GraphQL: srv.GraphQLURL},
		Token:     "test-token", Owner: "octo", Repo: "demo",
		Transport: srv.Client().Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gitRefs is the lock refs kept by git from a repository of ralph's own whose remote is the test server's.
func gitRefs(t testing.TB, srv *githubtest.Server) GitRefs {
	t.Helper()
	repo, err := git.Open(context.Background(), git.ExecRunner{Env: []string{"HOME=" + t.TempDir()}}, t.TempDir(), "", srv.BareRepo, git.Auth{})
	if err != nil {
		t.Fatal(err)
	}
	return GitRefs{Repo: repo}
}

func actions(refs Refs, runs Runs, run int64, lease time.Duration) *Locker {
	return &Locker{Refs: refs, Runs: runs, Holder: Holder{Kind: "actions", RunID: run, Attempt: 1}, Lease: lease}
}

// both are the two ways of keeping the lock refs, on one server.
func both(t *testing.T, srv *githubtest.Server) map[string]Refs {
	return map[string]Refs{"git": gitRefs(t, srv), "rest": RESTRefs{API: client(t, srv)}}
}

func TestAcquireRelease(t *testing.T) {
	t.Parallel()
	for kind := range both(t, githubtest.New(t, githubtest.Options{})) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			refs, api := both(t, srv)[kind], client(t, srv)
			ctx := context.Background()
			srv.SetWorkflowRun(1, "in_progress", "")

			a, err := actions(refs, api, 1, time.Hour).Acquire(ctx, 7)
			if err != nil {
				t.Fatal(err)
			}
			if a.TookOver() != "" {
				t.Errorf("a free lock reports a takeover: %q", a.TookOver())
			}
			// What git pushed, GitHub's refs API sees (and the other way round).
			if ref, err := api.GetRef(ctx, RefName(7)); err != nil || ref.Object.SHA != a.sha {
				t.Errorf("the refs API sees %+v, %v; want the lock at %s", ref, err, a.sha)
			}
			// A second run is refused and told who holds the issue.
			_, err = actions(refs, api, 2, time.Hour).Acquire(ctx, 7)
			var held *HeldError
			if !errors.As(err, &held) || !strings.Contains(held.Holder, "Actions run 1") {
				t.Fatalf("second Acquire: %v, want a HeldError naming run 1", err)
			}
			// Another issue is independent.
			b, err := actions(refs, api, 2, time.Hour).Acquire(ctx, 8)
			if err != nil {
				t.Fatalf("another issue: %v", err)
			}
			locked, err := actions(refs, api, 3, time.Hour).Locked(ctx)
			if err != nil || !locked[7] || !locked[8] || len(locked) != 2 {
				t.Errorf("Locked = %v, %v; want 7 and 8", locked, err)
			}
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := api.GetRef(ctx, RefName(7)); !errors.Is(err, ghapi.ErrNotFound) {
				t.Errorf("the ref is still there after Release: %v", err)
			}
			// Free again.
			c, err := actions(refs, api, 3, time.Hour).Acquire(ctx, 7)
			if err != nil {
				t.Fatalf("after release: %v", err)
			}
			for _, l := range []*Lease{b, c} {
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestGitLockMakesNoRequests: kept by git, an uncontended lock costs GitHub's API nothing, and the run
// check of a contended one only its one question.
func TestGitLockMakesNoRequests(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	refs, api := gitRefs(t, srv), client(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(1, "in_progress", "")
	a, err := actions(refs, api, 1, time.Hour).Acquire(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("an uncontended acquire and release made API requests: %v", got)
	}
	if a, err = actions(refs, api, 1, time.Hour).Acquire(ctx, 7); err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	var held *HeldError
	if _, err := actions(refs, api, 2, time.Hour).Acquire(ctx, 7); !errors.As(err, &held) {
		t.Fatalf("a held lock: %v", err)
	}
	if got := srv.Requests(); len(got) != 1 || got[0].Path != "/repos/octo/demo/actions/runs/1" {
		t.Errorf("a refused acquire made %v, want only the question whether run 1 still runs", got)
	}
}

func TestTakeover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		holder   *Locker
		taker    *Locker
		setup    func(srv *githubtest.Server)
		wantTake string // substring of TookOver; "" = refused
	}{
		{
			name:     "holder's run completed",
			holder:   actions(nil, nil, 10, time.Hour),
			taker:    actions(nil, nil, 11, time.Hour),
			setup:    func(srv *githubtest.Server) { srv.SetWorkflowRun(10, "completed", "cancelled") },
			wantTake: "its Actions run has completed (cancelled)",
		},
		{
			name:   "holder's run still running",
			holder: actions(nil, nil, 10, time.Hour),
			taker:  actions(nil, nil, 11, time.Hour),
			setup:  func(srv *githubtest.Server) { srv.SetWorkflowRun(10, "in_progress", "") },
		},
		{
			name:   "holder's run unknown and lease alive",
			holder: actions(nil, nil, 10, time.Hour),
			taker:  actions(nil, nil, 11, time.Hour),
		},
		{
			name:     "lease expired",
			holder:   &Locker{Holder: Holder{Kind: "actions", RunID: 10}, Lease: time.Hour, Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }},
			taker:    actions(nil, nil, 11, time.Hour),
			setup:    func(srv *githubtest.Server) { srv.SetWorkflowRun(10, "in_progress", "") },
			wantTake: "its lease expired",
		},
		{
			name:     "an earlier attempt of the same run",
			holder:   &Locker{Holder: Holder{Kind: "actions", RunID: 10, Attempt: 1}, Lease: time.Hour},
			taker:    &Locker{Holder: Holder{Kind: "actions", RunID: 10, Attempt: 2}, Lease: time.Hour},
			setup:    func(srv *githubtest.Server) { srv.SetWorkflowRun(10, "in_progress", "") },
			wantTake: "attempt 2 of this run replaced attempt 1",
		},
		{
			name:     "local holder whose process ended",
			holder:   &Locker{Holder: Holder{Kind: "local", Host: "laptop", PID: 4242}, Lease: time.Hour},
			taker:    &Locker{Holder: Holder{Kind: "local", Host: "laptop", PID: 1}, Lease: time.Hour, Alive: func(pid int) bool { return pid != 4242 }},
			wantTake: "process 4242 on laptop has ended",
		},
		{
			name:   "local holder on another machine",
			holder: &Locker{Holder: Holder{Kind: "local", Host: "laptop", PID: 4242}, Lease: time.Hour},
			taker:  &Locker{Holder: Holder{Kind: "local", Host: "desktop", PID: 1}, Lease: time.Hour, Alive: func(int) bool { return false }},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			api := client(t, srv)
			ctx := context.Background()
			tt.holder.Refs, tt.taker.Refs = gitRefs(t, srv), gitRefs(t, srv)
			tt.holder.Runs, tt.taker.Runs = api, api
			if tt.setup != nil {
				tt.setup(srv)
			}
			if _, err := tt.holder.Acquire(ctx, 5); err != nil {
				t.Fatal(err)
			}
			got, err := tt.taker.Acquire(ctx, 5)
			if tt.wantTake == "" {
				var held *HeldError
				if !errors.As(err, &held) {
					t.Fatalf("Acquire = %v, want HeldError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if !strings.Contains(got.TookOver(), tt.wantTake) {
				t.Errorf("TookOver = %q, want it to say %q", got.TookOver(), tt.wantTake)
			}
			ref, err := api.GetRef(ctx, RefName(5))
			if err != nil {
				t.Fatal(err)
			}
			c, err := api.Commit(ctx, ref.Object.SHA)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ParseHolder(c.Message)
			if err != nil || h.RunID != tt.taker.Holder.RunID || h.PID != tt.taker.Holder.PID {
				t.Errorf("the lock now names %+v (%v), want the taker", h, err)
			}
		})
	}
}

// TestConcurrentAcquire: of many runs that try at once, exactly one holds the lock; the same for takeovers.
func TestConcurrentAcquire(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	api := client(t, srv)
	// The racers share one repository, as gh ralph processes on one checkout do; their pushes race on the
	// server's repository.
	refs := gitRefs(t, srv)
	ctx := context.Background()
	race := func(issue int) (winners []*Lease, held int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for run := int64(100); run < 108; run++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := actions(refs, api, run, time.Hour).Acquire(ctx, issue)
				mu.Lock()
				defer mu.Unlock()
				var h *HeldError
				switch {
				case err == nil:
					winners = append(winners, l)
				case errors.As(err, &h):
					held++
				default:
					t.Errorf("run %d: %v", run, err)
				}
			}()
		}
		wg.Wait()
		return winners, held
	}
	for round := 0; round < 5; round++ {
		winners, held := race(9)
		if len(winners) != 1 || held != 7 {
			t.Fatalf("round %d: %d holders and %d refused, want 1 and 7", round, len(winners), held)
		}
		if err := winners[0].Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Takeovers race too: a stale holder, eight takers, one wins.
	srv.SetWorkflowRun(99, "completed", "failure")
	if _, err := actions(refs, api, 99, time.Hour).Acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	winners, held := race(10)
	if len(winners) != 1 || held != 7 {
		t.Fatalf("takeover race: %d holders and %d refused, want 1 and 7", len(winners), held)
	}
	if winners[0].TookOver() == "" {
		t.Errorf("the winner does not report the takeover")
	}
}

// TestRenewalAndLoss: a held lock is renewed; when another run takes it over, the lease reports the loss
// and Release leaves the new holder's lock alone.
func TestRenewalAndLoss(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	api := client(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(1, "in_progress", "")
	refs := gitRefs(t, srv)
	a, err := actions(refs, api, 1, 300*time.Millisecond).Acquire(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := api.GetRef(ctx, RefName(3))
	// Renewals come every third of the lease; on a loaded machine give them time.
	var renewed ghapi.Ref
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if renewed, _ = api.GetRef(ctx, RefName(3)); renewed.Object.SHA != first.Object.SHA {
			break
		}
	}
	if renewed.Object.SHA == first.Object.SHA {
		t.Fatalf("the lock was not renewed")
	}
	// Each renewal is a child of the lock it replaces: following parents leads back to the first lock.
	sha, found := renewed.Object.SHA, false
	for i := 0; i < 10 && !found; i++ {
		c, err := api.Commit(ctx, sha)
		if err != nil || len(c.Parents) != 1 {
			break
		}
		sha = c.Parents[0].SHA
		found = sha == first.Object.SHA
	}
	if !found {
		t.Errorf("the renewal is not a fast-forward of the lock")
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A holder that renews rarely; its run is reported completed, another run takes over, and the holder's
	// next renewal learns that it lost the lock.
	holder := actions(refs, api, 1, time.Hour)
	holder.Renew = time.Hour
	a, err = holder.Acquire(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetWorkflowRun(1, "completed", "success")
	b, err := actions(gitRefs(t, srv), api, 2, time.Hour).Acquire(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantLost(t, a)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetRef(ctx, RefName(3)); err != nil {
		t.Errorf("the old holder's Release deleted the new holder's lock: %v", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestParseHolder(t *testing.T) {
	t.Parallel()
	l := &Locker{Holder: Holder{Kind: "local", Host: "h", PID: 9, User: "mona"}, Lease: time.Minute, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	msg, err := l.lockMessage(4)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHolder(msg)
	if err != nil {
		t.Fatal(err)
	}
	if h.String() != "gh ralph of mona on h (pid 9)" || !h.Expires.Equal(time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC)) {
		t.Errorf("holder = %+v (%s)", h, h)
	}
	if _, err := ParseHolder("no json here"); err == nil {
		t.Errorf("ParseHolder accepted a message with no holder")
	}
}

// TestExpiredLeaseTakenOver: a holder whose lease expired without renewal is taken over; its next renewal
// learns the loss (Lost), and its Release, even before it learned anything, leaves the new holder's lock.
func TestExpiredLeaseTakenOver(t *testing.T) {
	t.Parallel()
	for kind := range both(t, githubtest.New(t, githubtest.Options{})) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.Options{})
			api := client(t, srv)
			ctx := context.Background()
			srv.SetWorkflowRun(1, "in_progress", "")
			for _, learns := range []bool{true, false} {
				// The holder's clock is two hours behind: the lease it writes has expired for everyone else.
				holder := &Locker{Refs: both(t, srv)[kind], Runs: api, Holder: Holder{Kind: "actions", RunID: 1, Attempt: 1},
					Lease: time.Hour, Renew: time.Hour, Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }}
				a, err := holder.Acquire(ctx, 4)
				if err != nil {
					t.Fatal(err)
				}
				b, err := actions(both(t, srv)[kind], api, 2, time.Hour).Acquire(ctx, 4)
				if err != nil {
					t.Fatalf("taking over an expired lease: %v", err)
				}
				if !strings.Contains(b.TookOver(), "its lease expired") {
					t.Errorf("TookOver = %q", b.TookOver())
				}
				if learns {
					wantLost(t, a)
				}
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if ref, err := api.GetRef(ctx, RefName(4)); err != nil || ref.Object.SHA != b.sha {
					t.Fatalf("after the old holder's Release (learned the loss: %v): the lock is %+v, %v; want the new holder's %s", learns, ref, err, b.sha)
				}
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// wantLost renews a lease that another run took over: the renewal must report the loss, and Lost be closed.
func wantLost(t *testing.T, a *Lease) {
	t.Helper()
	if lost := a.renewNow(context.Background()); !lost {
		t.Fatal("the renewal after a takeover did not report the loss")
	}
	select {
	case <-a.Lost():
	default:
		t.Fatal("Lost() is not closed after the loss")
	}
}

// lostSwaps is a Refs whose every Swap after the first lands on the remote but whose answer is lost: the
// caller sees an error, as a renewal does whose git push outlived its deadline or whose reply never came.
type lostSwaps struct {
	Refs
	mu    sync.Mutex
	swaps int
}

func (l *lostSwaps) Swap(ctx context.Context, ref, parent, msg string) (string, error) {
	sha, err := l.Refs.Swap(ctx, ref, parent, msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.swaps++; l.swaps > 1 && err == nil {
		return "", errors.New("the answer was lost")
	}
	return sha, err
}

// lateSwaps lands its second swap only after answering that it failed, as a request does whose client gave
// up (a deadline) before the server carried it out.
type lateSwaps struct {
	Refs
	mu     sync.Mutex
	swaps  int
	landed chan struct{}
}

func (l *lateSwaps) Swap(ctx context.Context, ref, parent, msg string) (string, error) {
	l.mu.Lock()
	l.swaps++
	n := l.swaps
	l.mu.Unlock()
	if n != 2 {
		return l.Refs.Swap(ctx, ref, parent, msg)
	}
	go func() {
		defer close(l.landed)
		time.Sleep(50 * time.Millisecond)
		_, _ = l.Refs.Swap(context.Background(), ref, parent, msg)
	}()
	return "", errors.New("context deadline exceeded")
}

// TestRenewalLandsAfterItsAnswer: a renewal given up before it landed, which lands afterwards, is still the
// lease's own: the next renewal is not taken for a lost lock, and Release deletes the lock from where it is.
// Under load the server may carry out a renewal after its client's deadline; before, the lease was then
// taken for lost and Release left the lock behind.
func TestRenewalLandsAfterItsAnswer(t *testing.T) {
	t.Parallel()
	holdThrough(t, map[string]int{"git": 23, "rest": 24}, 200*time.Millisecond, func(refs Refs) (Refs, func() int) {
		late := &lateSwaps{Refs: refs, landed: make(chan struct{})}
		return late, func() int {
			select {
			case <-late.landed:
			default:
				return 0
			}
			late.mu.Lock()
			defer late.mu.Unlock()
			return late.swaps - 2 // the renewals after the one that landed late
		}
	})
}

// TestRenewalAnswerLost: a renewal that landed though its answer was lost is the lease's own: it is not
// taken for a lost lock, the next renewal builds on it, and Release deletes the lock (no lock of a finished
// run is left for the next run to wait out).
func TestRenewalAnswerLost(t *testing.T) {
	t.Parallel()
	holdThrough(t, map[string]int{"git": 21, "rest": 22}, 300*time.Millisecond, func(refs Refs) (Refs, func() int) {
		lost := &lostSwaps{Refs: refs}
		return lost, func() int {
			lost.mu.Lock()
			defer lost.mu.Unlock()
			return lost.swaps - 1 // the renewals after the first, all of whose answers are lost
		}
	})
}

// holdThrough takes a lock (issues: its number for git and for REST refs) through the refs wrap makes of the
// real ones, renewed every so often, until two renewals more than the odd one were tried (renewed says how
// many), and checks that the lease was never taken for lost and that Release left no lock.
func holdThrough(t *testing.T, issues map[string]int, every time.Duration, wrap func(Refs) (Refs, func() int)) {
	srv := githubtest.New(t, githubtest.Options{})
	api := client(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(1, "in_progress", "")
	for name, refs := range both(t, srv) {
		t.Run(name, func(t *testing.T) {
			wrapped, renewed := wrap(refs)
			l := actions(wrapped, api, 1, every)
			var warned []string
			var mu sync.Mutex
			l.Warnf = func(f string, a ...any) { mu.Lock(); warned = append(warned, fmt.Sprintf(f, a...)); mu.Unlock() }
			issue := issues[name]
			a, err := l.Acquire(ctx, issue)
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && renewed() < 2; time.Sleep(20 * time.Millisecond) {
			}
			select {
			case <-a.Lost():
				t.Errorf("a renewal of the lease's own was taken for a lost lock (warnings: %q)", warned)
			default:
			}
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, _, found, err := refs.Read(ctx, "refs/"+RefName(issue)); err != nil || found {
				t.Errorf("after Release the lock is still there (found %v, %v)", found, err)
			}
		})
	}
}
