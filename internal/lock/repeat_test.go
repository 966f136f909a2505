package lock

import (
	"context"
	"errors"
	"testing"
	"time"

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
