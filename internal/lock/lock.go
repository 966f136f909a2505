// Package lock is ralph's per-issue lock on GitHub: the ref refs/ralph/locks/<N>, which GitHub creates only
// when it does not exist and moves only by a fast-forward, so that two runs can never both hold an issue.
// The ref points at a commit whose message names the holder and its lease.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// API is what the lock needs of GitHub; *ghapi.Client implements it.
type API interface {
	CreateCommit(ctx context.Context, message, tree string, parents []string) (ghapi.GitCommit, error)
	Commit(ctx context.Context, sha string) (ghapi.GitCommit, error)
	GetRef(ctx context.Context, ref string) (ghapi.Ref, error)
	CreateRef(ctx context.Context, ref, sha string) error
	UpdateRef(ctx context.Context, ref, sha string, force bool) error
	DeleteRef(ctx context.Context, ref string) error
	WorkflowRun(ctx context.Context, id int64) (ghapi.WorkflowRun, error)
}

// Holder says who holds a lock: an Actions run, or gh ralph on someone's machine.
type Holder struct {
	Kind    string    `json:"kind"` // "actions" or "local"
	RunID   int64     `json:"run_id,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
	RunURL  string    `json:"run_url,omitempty"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	User    string    `json:"user,omitempty"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

func (h Holder) String() string {
	if h.Kind == "actions" {
		s := fmt.Sprintf("Actions run %d", h.RunID)
		if h.Attempt > 1 {
			s += fmt.Sprintf(" (attempt %d)", h.Attempt)
		}
		if h.RunURL != "" {
			s += " " + h.RunURL
		}
		return s
	}
	s := fmt.Sprintf("gh ralph on %s (pid %d)", h.Host, h.PID)
	if h.User != "" {
		s = fmt.Sprintf("gh ralph of %s on %s (pid %d)", h.User, h.Host, h.PID)
	}
	return s
}

// releaseMargin is how close to its expiry a lease is treated as possibly expired.
const releaseMargin = 5 * time.Second

// RefName is the lock's ref, as the refs API names it (without "refs/").
func RefName(issue int) string { return fmt.Sprintf("ralph/locks/%d", issue) }

// Locker takes and keeps issue locks for one holder.
type Locker struct {
	API    API
	Holder Holder        // who this run is; Since and Expires are filled in
	Lease  time.Duration // how long a lock holds without renewal
	Renew  time.Duration // how often a held lock is renewed; 0: a third of Lease
	Now    func() time.Time
	// Alive says whether a process of this machine still runs (a local holder on the same host); nil: signal 0.
	Alive func(pid int) bool
	// Warnf reports renewal trouble; nil: silent.
	Warnf func(format string, args ...any)
}

func (l *Locker) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

// lockMessage is the lock commit's message, and the expiry it promises.
func (l *Locker) lockMessage(issue int) (string, time.Time, error) {
	h := l.Holder
	h.Since = l.now().Truncate(time.Second)
	h.Expires = h.Since.Add(l.Lease)
	b, err := json.Marshal(h)
	if err != nil {
		return "", time.Time{}, err
	}
	return fmt.Sprintf("ralph lock for #%d\n\n%s\n", issue, b), h.Expires, nil
}

// ParseHolder reads the holder out of a lock commit's message.
func ParseHolder(message string) (Holder, error) {
	i := strings.Index(message, "{")
	if i < 0 {
		return Holder{}, errors.New("the lock commit names no holder")
	}
	var h Holder
	if err := json.Unmarshal([]byte(strings.TrimSpace(message[i:])), &h); err != nil {
		return Holder{}, fmt.Errorf("the lock commit's holder: %w", err)
	}
	return h, nil
}

// Acquire takes the lock of issue, or takes it over when its holder has finished or its lease has expired;
// a live holder gives *HeldError.
func (l *Locker) Acquire(ctx context.Context, issue int) (*Lease, error) {
	if l.Lease <= 0 {
		return nil, errors.New("lock: the lease must be positive")
	}
	ref := RefName(issue)
	for try := 0; try < 3; try++ {
		msg, expires, err := l.lockMessage(issue)
		if err != nil {
			return nil, err
		}
		c, err := l.API.CreateCommit(ctx, msg, ghapi.EmptyTree, nil)
		if err != nil {
			return nil, fmt.Errorf("lock: writing the lock commit: %w", err)
		}
		err = l.API.CreateRef(ctx, "refs/"+ref, c.SHA)
		if err == nil {
			return l.hold(issue, c.SHA, "", expires), nil
		}
		if !isStatus(err, http.StatusUnprocessableEntity) {
			return nil, fmt.Errorf("lock: creating refs/%s: %w", ref, err)
		}
		// Held: by whom, and is that holder still there?
		cur, err := l.API.GetRef(ctx, ref)
		if errors.Is(err, ghapi.ErrNotFound) {
			continue // released between our create and our read: try again
		}
		if err != nil {
			return nil, fmt.Errorf("lock: reading refs/%s: %w", ref, err)
		}
		if cur.Object.SHA == c.SHA {
			// The ref is at the commit this very attempt wrote: our create took effect, and the 422 is the
			// answer to a repeat of it (the client retried a 5xx GitHub gave after applying the create).
			// Without this the run would find the issue "held by" itself and stop the chain.
			return l.hold(issue, c.SHA, "", expires), nil
		}
		held, err := l.API.Commit(ctx, cur.Object.SHA)
		if err != nil {
			return nil, fmt.Errorf("lock: reading the lock commit: %w", err)
		}
		holder, perr := ParseHolder(held.Message)
		why := ""
		if perr != nil {
			why = perr.Error() + "; taking it over"
		} else if why, err = l.stale(ctx, holder); err != nil {
			return nil, err
		}
		if why == "" {
			return nil, &HeldError{Holder: fmt.Sprintf("%s since %s (lease until %s)", holder, holder.Since.Format(time.RFC3339), holder.Expires.Format(time.RFC3339))}
		}
		// Take over by a fast-forward from the commit we read: if anyone else moved the lock meanwhile
		// (took it over, or its holder renewed it), GitHub refuses, and we look again.
		msg, expires, err = l.lockMessage(issue)
		if err != nil {
			return nil, err
		}
		next, err := l.API.CreateCommit(ctx, msg, ghapi.EmptyTree, []string{cur.Object.SHA})
		if err != nil {
			return nil, fmt.Errorf("lock: writing the lock commit: %w", err)
		}
		err = l.API.UpdateRef(ctx, ref, next.SHA, false)
		if err == nil {
			return l.hold(issue, next.SHA, fmt.Sprintf("%s: %s", holder, why), expires), nil
		}
		if !isStatus(err, http.StatusUnprocessableEntity) {
			return nil, fmt.Errorf("lock: taking over refs/%s: %w", ref, err)
		}
	}
	return nil, &HeldError{Holder: "another run (the lock changed hands while ralph looked)"}
}

// stale says why holder no longer holds the lock, or "" when it does.
func (l *Locker) stale(ctx context.Context, h Holder) (string, error) {
	now := l.now()
	if !h.Expires.IsZero() && now.After(h.Expires) {
		return fmt.Sprintf("its lease expired at %s", h.Expires.Format(time.RFC3339)), nil
	}
	switch h.Kind {
	case "actions":
		me := l.Holder
		if me.Kind == "actions" && me.RunID == h.RunID && me.Attempt > h.Attempt {
			return fmt.Sprintf("attempt %d of this run replaced attempt %d", me.Attempt, h.Attempt), nil
		}
		if h.RunID == 0 {
			return "", nil
		}
		run, err := l.API.WorkflowRun(ctx, h.RunID)
		if errors.Is(err, ghapi.ErrNotFound) {
			return "", nil // unknown to us; its lease decides
		}
		if err != nil {
			return "", fmt.Errorf("lock: asking whether run %d still runs: %w", h.RunID, err)
		}
		if run.Status == "completed" {
			return fmt.Sprintf("its Actions run has completed (%s)", run.Conclusion), nil
		}
	case "local":
		if h.Host != "" && h.Host == l.Holder.Host && h.PID > 0 && !l.alive(h.PID) {
			return fmt.Sprintf("process %d on %s has ended", h.PID, h.Host), nil
		}
	}
	return "", nil
}

func (l *Locker) alive(pid int) bool {
	if l.Alive != nil {
		return l.Alive(pid)
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func isStatus(err error, status int) bool {
	var ge *ghapi.Error
	return errors.As(err, &ge) && ge.Status == status
}

// HeldError says another run holds the issue.
type HeldError struct{ Holder string }

func (e *HeldError) Error() string { return "issue is held by " + e.Holder }

// Lease is a held lock, renewed in the background until released.
type Lease struct {
	l        *Locker
	issue    int
	tookOver string

	mu      sync.Mutex
	sha     string
	expires time.Time // the expiry of the lease this run last wrote
	lost    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func (l *Locker) hold(issue int, sha, tookOver string, expires time.Time) *Lease {
	ls := &Lease{l: l, issue: issue, sha: sha, tookOver: tookOver, expires: expires, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go ls.renew()
	return ls
}

func (ls *Lease) TookOver() string      { return ls.tookOver }
func (ls *Lease) Lost() <-chan struct{} { return ls.lost }

// renew moves the lock to a fresh lease every Renew, until the lease is released or lost.
func (ls *Lease) renew() {
	defer close(ls.done)
	every := ls.l.Renew
	if every <= 0 {
		every = ls.l.Lease / 3
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ls.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		lost := ls.renewNow(ctx)
		cancel()
		if lost {
			return
		}
	}
}

// renewNow renews the lease once, by a fast-forward of the lock: a refusal means another run took the lock
// over (this lease had expired), and the lease is lost. Other errors are reported and tried again later.
func (ls *Lease) renewNow(ctx context.Context) (lost bool) {
	err := ls.renewOnce(ctx)
	if isStatus(err, http.StatusUnprocessableEntity) {
		if ls.l.Warnf != nil {
			ls.l.Warnf("lost the lock on #%d: another run took it over", ls.issue)
		}
		close(ls.lost)
		return true
	}
	if err != nil && ls.l.Warnf != nil {
		ls.l.Warnf("renewing the lock on #%d: %v (trying again)", ls.issue, err)
	}
	return false
}

func (ls *Lease) renewOnce(ctx context.Context) error {
	ls.mu.Lock()
	cur := ls.sha
	ls.mu.Unlock()
	msg, expires, err := ls.l.lockMessage(ls.issue)
	if err != nil {
		return err
	}
	next, err := ls.l.API.CreateCommit(ctx, msg, ghapi.EmptyTree, []string{cur})
	if err != nil {
		return err
	}
	if err := ls.l.API.UpdateRef(ctx, RefName(ls.issue), next.SHA, false); err != nil {
		return err
	}
	ls.mu.Lock()
	ls.sha, ls.expires = next.SHA, expires
	ls.mu.Unlock()
	return nil
}

// Release deletes the lock if this run still holds it.
func (ls *Lease) Release(ctx context.Context) error {
	ls.once.Do(func() { close(ls.stop) })
	<-ls.done
	select {
	case <-ls.lost:
		return nil // someone else holds it now: not ours to delete
	default:
	}
	ls.mu.Lock()
	sha, expires := ls.sha, ls.expires
	ls.mu.Unlock()
	// While the lease this run wrote has not expired (with a margin for the clocks of other machines),
	// nobody can have taken the lock over: delete it at once. Near or after the expiry, look first, so as
	// not to delete the lock of a run that took it over.
	if ls.l.now().Before(expires.Add(-max(ls.l.Lease/10, releaseMargin))) {
		return ls.l.API.DeleteRef(ctx, RefName(ls.issue))
	}
	cur, err := ls.l.API.GetRef(ctx, RefName(ls.issue))
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock: reading refs/%s: %w", RefName(ls.issue), err)
	}
	if cur.Object.SHA != sha {
		return nil // taken over after our lease expired
	}
	return ls.l.API.DeleteRef(ctx, RefName(ls.issue))
}

// Live says whether issue's lock is held by a live run, and by whom; a missing or stale lock is not live.
// It is what a sweep asks before it starts a run on a locked issue.
func (l *Locker) Live(ctx context.Context, issue int) (bool, string, error) {
	cur, err := l.API.GetRef(ctx, RefName(issue))
	if errors.Is(err, ghapi.ErrNotFound) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	c, err := l.API.Commit(ctx, cur.Object.SHA)
	if err != nil {
		return false, "", err
	}
	h, err := ParseHolder(c.Message)
	if err != nil {
		return false, "", nil // unreadable: the run the sweep starts takes it over
	}
	why, err := l.stale(ctx, h)
	if err != nil {
		return false, "", err
	}
	return why == "", h.String(), nil
}
