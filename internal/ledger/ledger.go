// Package ledger keeps what a repository's agents spent on their models in the current UTC day, so that
// budget.day holds across runs on any number of machines. The figure lives on the remote, in the ref
// refs/ralph/budget/day: a commit (git's empty tree) whose message carries the day's total, moved by a
// compare-and-swap push. A run reads it with one fetch before its agent starts and adds its spending with
// one push after: git round trips, not API requests, so a step's REST budget is untouched.
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Ref is where the day's total lives.
const Ref = "refs/ralph/budget/day"

// Day is one UTC day's spending across the repository.
type Day struct {
	Date    string  `json:"date"` // YYYY-MM-DD, UTC
	CostUSD float64 `json:"cost_usd"`
	Tokens  int     `json:"tokens"`
	Runs    int     `json:"runs"`
}

// Repo is what the ledger needs of ralph's repository; *git.Repo implements it.
type Repo interface {
	FetchRef(ctx context.Context, ref string) (sha string, found bool, err error)
	Message(ctx context.Context, sha string) (string, error)
	CommitNote(ctx context.Context, msg, parent string, author git.Signature) (string, error)
	PushRef(ctx context.Context, sha, ref, expectOld string) error
}

var _ Repo = (*git.Repo)(nil)

// Ledger reads and adds to the day's total.
type Ledger struct {
	Repo   Repo
	Author git.Signature
	Now    func() time.Time // nil: time.Now

	// last is what this ledger last read: Add tries to swap from it before it reads again, so that a
	// step that read the day before its agent ran records its spending with one push.
	last struct {
		day Day
		sha string
		ok  bool
	}
}

func (l *Ledger) today() string {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	return now().UTC().Format(time.DateOnly)
}

// Today is what the repository has spent so far today.
func (l *Ledger) Today(ctx context.Context) (Day, error) {
	d, sha, err := l.read(ctx)
	if err == nil {
		l.last.day, l.last.sha, l.last.ok = d, sha, true
	}
	return d, err
}

// read is today's figure and the commit that holds it ("" when today has none yet: a new day starts
// from zero, on top of nothing).
func (l *Ledger) read(ctx context.Context) (Day, string, error) {
	today := Day{Date: l.today()}
	sha, found, err := l.Repo.FetchRef(ctx, Ref)
	if err != nil || !found {
		return today, "", err
	}
	msg, err := l.Repo.Message(ctx, sha)
	if err != nil {
		return today, sha, err
	}
	d, err := parse(msg)
	if err != nil {
		// A figure nobody can read (someone with write access moved the ref) starts the day again.
		return today, sha, nil
	}
	if d.Date != today.Date {
		return today, sha, nil
	}
	return d, sha, nil
}

// tries bounds the compare-and-swap: each refusal means another run wrote in between, and the next try
// waits a little, at random, so that runs that collided do not collide again.
const tries = 8

// Add adds one run's spending to today's total and returns the new total. note says what spent it, for
// the ref's history ("#12 research").
func (l *Ledger) Add(ctx context.Context, cost float64, tokens int, note string) (Day, error) {
	for i := 0; ; i++ {
		var (
			d   Day
			old string
			err error
		)
		if l.last.ok && l.last.day.Date == l.today() {
			d, old = l.last.day, l.last.sha
		} else if d, old, err = l.read(ctx); err != nil {
			return d, err
		}
		l.last.ok = false
		parent := old
		if d.Runs == 0 {
			parent = "" // a new day: its history starts here
		}
		d.CostUSD += cost
		d.Tokens += tokens
		d.Runs++
		b, _ := json.Marshal(d)
		msg := fmt.Sprintf("ralph: %s spent $%.4f; %s so far $%.4f\n\n%s\n", note, cost, d.Date, d.CostUSD, b)
		sha, err := l.Repo.CommitNote(ctx, msg, parent, l.Author)
		if err != nil {
			return d, err
		}
		err = l.Repo.PushRef(ctx, sha, Ref, old)
		var rej *git.PushRejectedError
		switch {
		case err == nil:
			l.last.day, l.last.sha, l.last.ok = d, sha, true
			return d, nil
		case !errors.As(err, &rej) || i+1 >= tries:
			return d, fmt.Errorf("recording the day's spending in %s: %w", Ref, err)
		}
		select {
		case <-ctx.Done():
			return d, ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(50*time.Millisecond) << i))):
		}
	}
}

func parse(msg string) (Day, error) {
	i := strings.Index(msg, "{")
	if i < 0 {
		return Day{}, errors.New("no figure")
	}
	var d Day
	err := json.Unmarshal([]byte(strings.TrimSpace(msg[i:])), &d)
	return d, err
}
