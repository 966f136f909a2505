package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// repeatCreate sends each CreateRef twice and answers the second answer, as a client does that retries a
// create whose first answer was a 5xx GitHub gave after applying it: the repeat gets a 422.
type repeatCreate struct{ API }

func (r repeatCreate) CreateRef(ctx context.Context, ref, sha string) error {
	if err := r.API.CreateRef(ctx, ref, sha); err != nil {
		return err
	}
	return r.API.CreateRef(ctx, ref, sha)
}

// TestAcquireRepeatedCreate: a lock whose creation took effect holds even when the answer the run saw was
// the 422 of a repeat; the run must not find the issue "held by" itself.
func TestAcquireRepeatedCreate(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	api := client(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(1, "in_progress", "")
	a, err := actions(RESTRefs{repeatCreate{api}}, api, 1, time.Hour).Acquire(ctx, 7)
	if err != nil {
		t.Fatalf("Acquire with a repeated create: %v", err)
	}
	if a.TookOver() != "" {
		t.Errorf("a fresh lock reports a takeover: %q", a.TookOver())
	}
	// It is a lock all the same: another run is held off.
	var held *HeldError
	if _, err := actions(RESTRefs{repeatCreate{api}}, api, 2, time.Hour).Acquire(ctx, 7); !errors.As(err, &held) {
		t.Errorf("a second run: %v, want a HeldError", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// lostAnswers is a repository whose pushes reach the remote but whose answers are lost: the push takes
// effect, and the run sees a broken connection.
type lostAnswers struct{ Repo }

func (r lostAnswers) PushRef(ctx context.Context, sha, ref, expectOld string) error {
	if err := r.Repo.PushRef(ctx, sha, ref, expectOld); err != nil {
		return err
	}
	return errors.New("push: the connection was reset")
}

func (r lostAnswers) DeleteRemoteRef(ctx context.Context, ref, expectOld string) error {
	if err := r.Repo.DeleteRemoteRef(ctx, ref, expectOld); err != nil {
		return err
	}
	return errors.New("push: the connection was reset")
}

// TestGitLockLostAnswers: a lock push whose answer was lost, but which took effect, holds the lock (the
// run does not find the issue "held by" itself); a release whose answer was lost released it; a renewal
// whose answer was lost renewed it.
func TestGitLockLostAnswers(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	api := client(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(1, "in_progress", "")
	refs := GitRefs{Repo: lostAnswers{gitRefs(t, srv).Repo}}
	a, err := actions(refs, api, 1, time.Hour).Acquire(ctx, 7)
	if err != nil {
		t.Fatalf("Acquire with a lost answer: %v", err)
	}
	var held *HeldError
	if _, err := actions(gitRefs(t, srv), api, 2, time.Hour).Acquire(ctx, 7); !errors.As(err, &held) {
		t.Errorf("a second run: %v, want a HeldError", err)
	}
	if lost := a.renewNow(ctx); lost {
		t.Fatal("a renewal with a lost answer reported the lock lost")
	}
	if ref, err := api.GetRef(ctx, RefName(7)); err != nil || ref.Object.SHA != a.sha {
		t.Errorf("after the renewal the lock is at %+v, %v; want %s", ref, err, a.sha)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("Release with a lost answer: %v", err)
	}
	if _, err := api.GetRef(ctx, RefName(7)); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("the lock is still there after Release: %v", err)
	}
}
