// Package lock is ralph's per-issue lock on GitHub: the ref refs/ralph/locks/<N>, which is created only
// when it does not exist and moved only from the value its mover read (a compare-and-swap on the remote),
// so that two runs can never both hold an issue. The ref points at a commit whose message names the holder
// and its lease. ralph moves it with git pushes from its own repository (GitRefs): no API request; outside
// a checkout, where ralph has no repository, through the REST git API (RESTRefs).
package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// Refs is where the lock refs live. Every change is a compare-and-swap on the remote.
type Refs interface {
	// Swap writes a lock commit with message msg on parent ("": none) and moves ref from parent ("": ref
	// absent) to it. ErrMoved says ref was not at parent; sha is the commit written even then.
	Swap(ctx context.Context, ref, parent, msg string) (sha string, err error)
	// Read is the commit ref is at and its message; found is false when there is no such ref.
	Read(ctx context.Context, ref string) (sha, msg string, found bool, err error)
	// Delete deletes ref if it is at sha; ErrMoved says it is not (or is gone).
	Delete(ctx context.Context, ref, sha string) error
	// List names the refs whose names start with prefix.
	List(ctx context.Context, prefix string) ([]string, error)
}

// ErrMoved is a compare-and-swap of a lock ref that found the ref elsewhere than expected.
var ErrMoved = errors.New("the lock ref moved")

// Runs says whether an Actions run still runs; *ghapi.Client implements it.
type Runs interface {
	WorkflowRun(ctx context.Context, id int64) (ghapi.WorkflowRun, error)
}

// HeldError says another run holds the issue.
type HeldError struct{ Holder string }

func (e *HeldError) Error() string { return "issue is held by " + e.Holder }

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

// LocalHolder is ralph run on this machine (gh ralph, or the action run by hand) as user.
func LocalHolder(user string) Holder {
	host, _ := os.Hostname()
	return Holder{Kind: "local", Host: host, PID: os.Getpid(), User: user}
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

// RefName is the lock's ref, as the refs API names it (without "refs/").
func RefName(issue int) string { return fmt.Sprintf("ralph/locks/%d", issue) }

const refPrefix = "refs/ralph/locks/"

// Locker takes and keeps issue locks for one holder.
type Locker struct {
	Refs   Refs
	Runs   Runs          // asked, only when the lock is held, whether the holder's Actions run still runs; nil: never
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

// lockMessage is the lock commit's message. A nonce makes each lock commit
// unlike any other, even of the same holder in the same second: a push of a commit the remote already
// has at the ref would "succeed" as up to date, whatever its lease.
func (l *Locker) lockMessage(issue int) (string, error) {
	h := l.Holder
	h.Since = l.now().Truncate(time.Second)
	h.Expires = h.Since.Add(l.Lease)
	b, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	return fmt.Sprintf("ralph lock for #%d (%s)\n\n%s\n", issue, hex.EncodeToString(nonce[:]), b), nil
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
// a live holder gives *HeldError. Uncontended, it is one compare-and-swap.
func (l *Locker) Acquire(ctx context.Context, issue int) (*Lease, error) {
	if l.Lease <= 0 {
		return nil, errors.New("lock: the lease must be positive")
	}
	ref := "refs/" + RefName(issue)
	for try := 0; try < 3; try++ {
		msg, err := l.lockMessage(issue)
		if err != nil {
			return nil, err
		}
		mine, err := l.Refs.Swap(ctx, ref, "", msg)
		if err == nil {
			return l.hold(issue, mine, ""), nil
		}
		if !errors.Is(err, ErrMoved) {
			return nil, fmt.Errorf("lock: creating %s: %w", ref, err)
		}
		// Held: by whom, and is that holder still there?
		cur, curMsg, found, err := l.Refs.Read(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("lock: reading %s: %w", ref, err)
		}
		if !found {
			continue // released between our create and our read: try again
		}
		if cur == mine {
			// The ref is at the commit this very attempt wrote: our create took effect, and the refusal is
			// the answer to a repeat of it (a client retried a 5xx GitHub gave after applying the create).
			// Without this the run would find the issue "held by" itself and stop the chain.
			return l.hold(issue, mine, ""), nil
		}
		holder, perr := ParseHolder(curMsg)
		why := ""
		if perr != nil {
			why = perr.Error() + "; taking it over"
		} else if why, err = l.stale(ctx, holder); err != nil {
			return nil, err
		}
		if why == "" {
			return nil, &HeldError{Holder: fmt.Sprintf("%s since %s (lease until %s)", holder, holder.Since.Format(time.RFC3339), holder.Expires.Format(time.RFC3339))}
		}
		// Take over from the commit we read: if anyone else moved the lock meanwhile (took it over, or its
		// holder renewed it), the swap is refused, and we look again.
		if msg, err = l.lockMessage(issue); err != nil {
			return nil, err
		}
		next, err := l.Refs.Swap(ctx, ref, cur, msg)
		if err == nil {
			return l.hold(issue, next, fmt.Sprintf("%s: %s", holder, why)), nil
		}
		if !errors.Is(err, ErrMoved) {
			return nil, fmt.Errorf("lock: taking over %s: %w", ref, err)
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
		if h.RunID == 0 || l.Runs == nil {
			return "", nil
		}
		run, err := l.Runs.WorkflowRun(ctx, h.RunID)
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

// Lease is a held lock, renewed in the background until released.
type Lease struct {
	l        *Locker
	issue    int
	tookOver string

	mu  sync.Mutex
	sha string
	// unsure are the messages of this lease's renewals whose answer was lost and whose commit was not
	// found at the ref then: such a swap may still land later (a request the server had not yet carried
	// out when its client gave up), and a ref found at one of them is this lease's, not another run's.
	unsure []string
	lost   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func (l *Locker) hold(issue int, sha, tookOver string) *Lease {
	ls := &Lease{l: l, issue: issue, sha: sha, tookOver: tookOver, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go ls.renew()
	return ls
}

// TookOver names the stale holder this run took the lock from, and why; "" when the lock was free.
func (ls *Lease) TookOver() string { return ls.tookOver }

// Lost is closed when another run took the lock over (this run's lease had expired).
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

// renewNow renews the lease once, by a swap from the commit this run last wrote: a refusal means another
// run took the lock over (this lease had expired), and the lease is lost. Other errors are reported and
// tried again later.
func (ls *Lease) renewNow(ctx context.Context) (lost bool) {
	err := ls.renewOnce(ctx)
	if errors.Is(err, ErrMoved) {
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
	msg, err := ls.l.lockMessage(ls.issue)
	if err != nil {
		return err
	}
	ref := "refs/" + RefName(ls.issue)
	next, err := ls.l.Refs.Swap(ctx, ref, cur, msg)
	if err != nil {
		// The swap may have landed though its answer was lost (a deadline, a broken connection, a retry
		// that found its own first try), or an earlier renewal's may have landed after it was given up: a
		// lock commit's message is that renewal's alone (its nonce), so a ref at a commit with one of them
		// is this lease's.
		sha, ours := ls.ours(ctx, ref, msg)
		if !ours {
			return err
		}
		next = sha
	}
	ls.mu.Lock()
	ls.sha = next
	ls.unsure = nil
	ls.mu.Unlock()
	return nil
}

// ours reads the lock ref after a swap or delete of this lease's was refused or went unanswered: whether it
// is at a commit of this lease's (msg, the renewal just tried, or one whose answer was lost before), and
// which. A renewal not found there is remembered, since it may land yet.
func (ls *Lease) ours(ctx context.Context, ref, msg string) (string, bool) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	sha, got, found, err := ls.l.Refs.Read(rctx, ref)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if msg != "" && len(ls.unsure) < 64 {
		ls.unsure = append(ls.unsure, strings.TrimSpace(msg))
	}
	if err != nil || !found || !slices.Contains(ls.unsure, strings.TrimSpace(got)) {
		return "", false
	}
	return sha, true
}

// Release deletes the lock if this run still holds it: a delete from the commit this run last wrote,
// which leaves alone the lock of a run that took it over.
func (ls *Lease) Release(ctx context.Context) error {
	ls.once.Do(func() { close(ls.stop) })
	<-ls.done
	select {
	case <-ls.lost:
		return nil // someone else holds it now: not ours to delete
	default:
	}
	ls.mu.Lock()
	sha := ls.sha
	ls.mu.Unlock()
	ref := "refs/" + RefName(ls.issue)
	err := ls.l.Refs.Delete(ctx, ref, sha)
	if errors.Is(err, ErrMoved) {
		// A renewal whose answer was lost may have landed since: the lock is still this lease's to delete.
		if now, ours := ls.ours(ctx, ref, ""); ours && now != sha {
			err = ls.l.Refs.Delete(ctx, ref, now)
		}
	}
	if errors.Is(err, ErrMoved) {
		return nil // taken over after our lease expired
	}
	return err
}

// Live says whether issue's lock is held by a live run, and by whom; a missing or stale lock is not live.
// It is what a sweep asks before it starts a run on a locked issue.
func (l *Locker) Live(ctx context.Context, issue int) (bool, string, error) {
	_, msg, found, err := l.Refs.Read(ctx, "refs/"+RefName(issue))
	if err != nil || !found {
		return false, "", err
	}
	h, err := ParseHolder(msg)
	if err != nil {
		return false, "", nil // unreadable: the run the sweep starts takes it over
	}
	why, err := l.stale(ctx, h)
	if err != nil {
		return false, "", err
	}
	return why == "", h.String(), nil
}

// Locked lists the issues that have a lock, live or stale: one listing of the lock refs.
func (l *Locker) Locked(ctx context.Context) (map[int]bool, error) {
	refs, err := l.Refs.List(ctx, refPrefix)
	if err != nil {
		return nil, err
	}
	locked := map[int]bool{}
	for _, r := range refs {
		if n, err := strconv.Atoi(strings.TrimPrefix(r, refPrefix)); err == nil {
			locked[n] = true
		}
	}
	return locked, nil
}
