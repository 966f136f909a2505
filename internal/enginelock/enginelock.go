// Package enginelock hands the per-issue lock (internal/lock) to the engine, whose Locker interface
// it satisfies: lock's own lease and held error in the engine's terms.
package enginelock

import (
	"context"
	"errors"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/lock"
)

// Locker is a *lock.Locker as an engine.Locker.
type Locker struct{ *lock.Locker }

var _ engine.Locker = Locker{}

// Acquire is lock's Acquire, with *lock.HeldError as *engine.HeldError.
func (l Locker) Acquire(ctx context.Context, issue int) (engine.Lease, error) {
	ls, err := l.Locker.Acquire(ctx, issue)
	var held *lock.HeldError
	if errors.As(err, &held) {
		return nil, &engine.HeldError{Holder: held.Holder}
	}
	if err != nil {
		return nil, err
	}
	return ls, nil
}
