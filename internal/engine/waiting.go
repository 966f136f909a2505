package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// An issue whose run ended without the run that goes on with it (GitHub did not take the dispatch: a rate
// limit past ralph's wait, or any other failure) waits for the next sweep. Two marks say so: the record's
// Waiting, which the status comment and gh ralph status show, and ralph's ref refs/ralph/waiting/<N>, which
// a sweep lists with one git ls-remote (no API request, however many issues there are) to take those
// issues first. Only ralph, or someone with write access, can write either; and a sweep takes a waiting
// issue only when it would take it anyway (ready, not held, not blocked, enrolled by a writer): the mark
// moves it to the front, nothing more. The ref is written with git, which GitHub's API rate limits do not
// refuse, so the mark holds when the dispatch was lost to one.

// waitingPrefix holds the refs that mark issues waiting for a sweep.
const waitingPrefix = "refs/ralph/waiting/"

func waitingRef(n int) string { return waitingPrefix + strconv.Itoa(n) }

// Lost records that the run that was to go on with issue n was not started: its dispatch was lost. step
// is the step that run was to take ("": the one the record calls for next); finish says it was to finish
// a step GitHub failed. Under the issue's lock (a run that holds it goes on with the issue: nothing
// waits), it marks the issue for the next sweep and writes the record's Waiting. Two git round trips and
// two requests, on this path only; the API's part is bounded in time, as GitHub may be refusing it too.
// waits is false when nothing waits for a sweep: a run holds the issue, or its next move is not ralph's.
func (e *Engine) Lost(ctx context.Context, n int, step workflow.Event, finish bool) (waits bool, err error) {
	if err := checkNumber(n); err != nil {
		return false, err
	}
	if e.DryRun {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	_, release, err := e.acquire(ctx, n)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			e.Log.Infof("#%d is held by %s, which goes on with it: it does not wait for a sweep", n, held.Holder)
			return false, nil
		}
		return true, fmt.Errorf("locking #%d: %w", n, err)
	}
	defer release()
	w := SweepWait{Since: e.now(), Step: step, Finish: finish}
	// The mark first: it is git's, and holds when GitHub's API refuses the record's write as it refused
	// the dispatch.
	var errs []error
	mark, err := e.markWaiting(ctx, n, w)
	if err != nil {
		errs = append(errs, fmt.Errorf("marking #%d for the next sweep: %w", n, err))
	}
	ic, err := e.reader().load(ctx, n, "")
	if err != nil {
		return true, errors.Join(append(errs, fmt.Errorf("reading #%d to record that it waits: %w", n, err))...)
	}
	p := e.table().Next(n, ic.rec, true, Facts{Blockers: []int{}}, e.Config)
	if ic.state == "" || !p.Takes() {
		// Nothing of ralph's to take (a person's turn, or done): nothing waits for a sweep.
		if mark != "" {
			if err := e.ForgetWaiting(ctx, n, mark); err != nil {
				errs = append(errs, fmt.Errorf("deleting the mark of #%d, which has no step to take: %w", n, err))
			}
		}
		return false, errors.Join(errs...)
	}
	if w.Step == "" {
		w.Step = p.Step.Name
	}
	rec := ic.rec.Clone()
	rec.Waiting = &w
	if err := ic.w.saveRecord(ctx, ic, rec); err != nil {
		errs = append(errs, fmt.Errorf("recording that #%d waits for a sweep: %w", n, err))
	}
	return true, errors.Join(errs...)
}

// waitingRefs keeps the marks with git, from ralph's repository; nil when the engine has none.
func (e *Engine) waitingRefs() *lock.GitRefs {
	if e.Workspaces == nil {
		return nil
	}
	return &lock.GitRefs{Repo: e.Workspaces.Repo(), Author: e.Author}
}

// markWaiting points issue n's mark at a commit that says what waits and since when, and says which.
func (e *Engine) markWaiting(ctx context.Context, n int, w SweepWait) (string, error) {
	refs := e.waitingRefs()
	if refs == nil {
		return "", nil
	}
	ref := waitingRef(n)
	parent, _, _, err := refs.Read(ctx, ref)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph: #%d waits for a sweep\n\nstep: %s\nfinish: %t\nsince: %s\n", n, w.Step, w.Finish, w.Since.Format(time.RFC3339))
	return refs.Swap(ctx, ref, parent, msg)
}

// WaitingIssues lists the issues marked as waiting for a sweep, with the commit each mark is at: one git
// ls-remote, no API request.
func (e *Engine) WaitingIssues(ctx context.Context) (map[int]string, error) {
	refs := e.waitingRefs()
	if refs == nil {
		return map[int]string{}, nil
	}
	names, err := refs.Repo.RemoteRefs(ctx, waitingPrefix)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for name, sha := range names {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, waitingPrefix)); err == nil && n > 0 {
			out[n] = sha
		}
	}
	return out, nil
}

// ForgetWaiting deletes issue n's mark if it is still at sha (a mark written since is a newer loss, and
// stays).
func (e *Engine) ForgetWaiting(ctx context.Context, n int, sha string) error {
	refs := e.waitingRefs()
	if refs == nil {
		return nil
	}
	if err := refs.Delete(ctx, waitingRef(n), sha); err != nil && !errors.Is(err, lock.ErrMoved) {
		return err
	}
	return nil
}

// goesOn clears what says issue ic waits for a sweep: this run goes on with it. The record's Waiting goes
// with the record write the run makes anyway; the mark is deleted (git), only when the record had it. It
// returns the issue without the wait.
func (e *Engine) goesOn(ctx context.Context, ic issue) issue {
	w := ic.rec.Waiting
	if w == nil {
		return ic
	}
	ic = ic.edited(func(rec *Record) { rec.Waiting = nil })
	e.Log.Infof("#%d waited for a sweep since %s: this run goes on with it", ic.n, w.Since.Format(time.RFC3339))
	refs := e.waitingRefs()
	if refs == nil {
		return ic
	}
	sha, _, found, err := refs.Read(ctx, waitingRef(ic.n))
	if err == nil && found {
		err = e.ForgetWaiting(ctx, ic.n, sha)
	}
	if err != nil {
		e.Log.Warnf("#%d: deleting its mark for the next sweep (the sweep deletes it when it takes the issue): %v", ic.n, err)
	}
	return ic
}
