package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/lock"
)

// Transient says whether err is GitHub (its API or its git host) failing for a while rather than refusing
// what ralph asked, as the clients that know their errors classify them (ghapi.Transient, git.Transient).
// A run that ends on one has left the issue where a run that starts afresh picks it up (every write is
// found again by its marker, its branch or the record, and the agent's work by its commit), so the Action
// dispatches a run to finish the step instead of leaving the issue to a sweep.
// The run's context ending is not transient: whoever ended it decides. A step's failure that ralph
// recorded (Result.Recorded) is not asked about: the record says what comes next, a retry or a person.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return git.Transient(err) || ghapi.Transient(err)
}

// MaxFinishing is how many runs in a row may be dispatched to finish the same step of an issue: GitHub
// failing for longer than that many runs (about a minute each) is an outage, which the next sweep, or a
// person's `/ralph retry`, outlasts better than a chain of runs that each fail.
const MaxFinishing = 3

// finishRef keeps, for issue n, the step the last runs failed to finish and how many did: ralph's own ref,
// moved by git (no API request), only on the failure path.
func finishRef(n int) string { return finishPrefix + strconv.Itoa(n) }

const finishPrefix = "refs/ralph/finish/"

// finishRefs keeps the finishing counts with git, from ralph's repository (no API request).
func (e *Engine) finishRefs() lock.GitRefs {
	return lock.GitRefs{Repo: e.Workspaces.Repo(), Author: e.Author}
}

// Finishing says whether a run that ended on a transient error (res: where it found issue res.Issue, the
// step it took) may dispatch a run to finish the step, and counts it: at most MaxFinishing in a row for the
// same state and step. A run that found the issue elsewhere starts the count again. An error (the count
// could not be read or kept) dispatches nothing: the bound holds whatever git says.
//
// carry is what the run that finishes must do first, in the caller's own words on one line ("": advance):
// a person's command that did not take effect (its run could not record it) goes with the count, so that
// the run dispatched to finish does it instead of leaving the person waiting (Carried reads it back).
func (e *Engine) Finishing(ctx context.Context, res Result, carry string) (ok bool, runs int, err error) {
	if strings.ContainsAny(carry, "\r\n") {
		return false, 0, errors.New("what a finishing run carries must be one line")
	}
	if e.Workspaces == nil {
		return true, 0, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	refs := e.finishRefs()
	ref, at := finishRef(res.Issue), fmt.Sprintf("%s %s", res.From, res.Step)
	parent, msg, found, err := refs.Read(ctx, ref)
	if err != nil {
		return false, 0, err
	}
	runs, since := 1, e.now()
	if found {
		// The same step, failed by the runs of the last hour: the same outage. (Two phases of implement
		// are the same state and step: a count an hour old is another story.)
		if f := parseFinish(msg); f.at == at && e.now().Sub(f.since) < time.Hour {
			runs, since = max(f.runs, 0)+1, f.since
		}
	}
	if runs > MaxFinishing {
		return false, runs - 1, nil
	}
	body := fmt.Sprintf("ralph: finishing #%d\n\nat: %s\nruns: %d\nsince: %s\n", res.Issue, at, runs, since.Format(time.RFC3339))
	if carry != "" {
		body += fmt.Sprintf("carry: %s\nwritten: %s\n", carry, e.now().Format(time.RFC3339))
	}
	if _, err := refs.Swap(ctx, ref, parent, body); err != nil {
		return false, 0, err
	}
	return true, runs, nil
}

// Carried is what the last run that dispatched a run to finish issue n's step left it to do (Finishing's
// carry), "" when nothing: a carry is read once it is written, within the hour, and never again after
// that. No API request: one git fetch of ralph's ref.
func (e *Engine) Carried(ctx context.Context, n int) (string, error) {
	if e.Workspaces == nil {
		return "", nil
	}
	_, msg, found, err := e.finishRefs().Read(ctx, finishRef(n))
	if err != nil || !found {
		return "", err
	}
	f := parseFinish(msg)
	if f.carry == "" || e.now().Sub(f.written) > time.Hour || f.written.After(e.now().Add(time.Minute)) {
		return "", nil
	}
	return f.carry, nil
}

// finish is a finishing count's commit message as Finishing writes it.
type finish struct {
	at             string
	runs           int
	since, written time.Time
	carry          string
}

// parseFinish reads a finishing count's commit message (Finishing's own format).
func parseFinish(msg string) (f finish) {
	for _, line := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(line, "at: "); ok {
			f.at = v
		}
		if v, ok := strings.CutPrefix(line, "runs: "); ok {
			f.runs, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(line, "since: "); ok {
			f.since, _ = time.Parse(time.RFC3339, v)
		}
		if v, ok := strings.CutPrefix(line, "carry: "); ok {
			f.carry = v
		}
		if v, ok := strings.CutPrefix(line, "written: "); ok {
			f.written, _ = time.Parse(time.RFC3339, v)
		}
	}
	return f
}

// ForgetFinishing deletes the finishing counts of issues no longer open and enrolled (open: the sweep's
// list of those): a count only matters while its issue has a step to finish. One git ls-remote, and a push
// a deletion (each with a lease on the count it saw, so a run counting meanwhile keeps its count). The
// sweep calls it; a step never does.
func (e *Engine) ForgetFinishing(ctx context.Context, open []int) (forgot []int, err error) {
	if e.Workspaces == nil {
		return nil, nil
	}
	counts := e.finishRefs()
	refs, err := counts.Repo.RemoteRefs(ctx, finishPrefix)
	if err != nil {
		return nil, err
	}
	var errs []error
	for name, sha := range refs {
		n, perr := strconv.Atoi(strings.TrimPrefix(name, finishPrefix))
		if perr != nil || n <= 0 || slices.Contains(open, n) {
			continue
		}
		if derr := counts.Delete(ctx, name, sha); derr != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", name, derr))
			continue
		}
		forgot = append(forgot, n)
	}
	slices.Sort(forgot)
	return forgot, errors.Join(errs...)
}
