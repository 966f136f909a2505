// Package view is ralph's read model for people: what ralph knows of an issue and of the pipeline of
// enrolled issues, read the way a run reads it (only ralph's own status comment counts, and only a record
// that passes Record.Check), for gh ralph status and the logs to print. The planner (engine.Next) says what
// comes next, as it does for a run.
package view

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/lock"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Reader is what reading an issue's status needs of GitHub; *ghapi.Client implements it.
type Reader interface {
	IssueWithComments(ctx context.Context, n int) (ghapi.Issue, []ghapi.Comment, error)
	Comments(ctx context.Context, n int) ([]ghapi.Comment, error)
	Permission(ctx context.Context, login string) (string, error)
	LabeledBy(ctx context.Context, n int, label string) (string, error)
	Viewer(ctx context.Context) (string, error)
	Issues(ctx context.Context, f ghapi.IssueFilter) ([]ghapi.Issue, error)
	GetRef(ctx context.Context, ref string) (ghapi.Ref, error)
	Commit(ctx context.Context, sha string) (ghapi.GitCommit, error)
	Owner() string
	Repo() string
}

// Watch is when a reader looks, and how long an issue may sit in one state before it is called stuck.
type Watch struct {
	Now   time.Time
	Stale time.Duration
}

// staleLock is how long an issue may sit in a lock state before status calls the lock stale.
const staleLock = time.Hour

// Issue is what ralph knows of one issue.
type Issue struct {
	Number    int
	Title     string
	URL       string
	Open      bool
	State     workflow.State // the record's; labels are a view of it
	Record    record.Record
	HasRecord bool
	UpdatedAt time.Time
	// Since is when the issue entered its state, as far as ralph knows.
	Since time.Time
	// Lock is who holds the issue's lock; nil: nobody.
	Lock *Lock
	// Running is the state label a step puts on while it runs (Research in Progress), when the labels show
	// it over the record's state: no disagreement with the record. Whether a run holds the issue now, Lock
	// says.
	Running workflow.State
	// Unowned: ralph:build counts for nobody (Unowned; Labeler added it), so no sweep takes the issue.
	// Read only when a step of ralph's could run now.
	Unowned bool
	Labeler string
	// Warnings are what a person should look at: comments and labels ralph does not believe, a person
	// needed, a stale lock, an issue stuck in a state.
	Warnings []string
}

// Lock is who holds an issue's lock (the ref refs/ralph/locks/<N>).
type Lock struct {
	Holder  string    `json:"holder"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired"`
}

// readLock reads who holds issue n's lock: two requests when someone does, one when nobody does.
func readLock(ctx context.Context, gh Reader, n int, now time.Time) (*Lock, error) {
	ref, err := gh.GetRef(ctx, lock.RefName(n))
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lock of #%d: %w", n, err)
	}
	c, err := gh.Commit(ctx, ref.Object.SHA)
	if err != nil {
		return nil, fmt.Errorf("reading the lock of #%d: %w", n, err)
	}
	h, err := lock.ParseHolder(c.Message)
	if err != nil {
		return &Lock{Holder: "unknown (" + err.Error() + ")"}, nil
	}
	return &Lock{Holder: h.String(), Since: h.Since, Expires: h.Expires, Expired: now.After(h.Expires)}, nil
}

// PhaseProgress is how far the implementation is: Done of Total phases, Next the title of the one to do next.
type PhaseProgress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Next  string `json:"next,omitempty"`
}

// Phases is how far the implementation is.
func (v Issue) Phases() PhaseProgress {
	p := PhaseProgress{Total: len(v.Record.Phases)}
	for _, ph := range v.Record.Phases {
		if ph.SHA != "" {
			p.Done++
		} else if p.Next == "" {
			p.Next = ph.Title
		}
	}
	return p
}

// Next says what happens next, and who does it: the planner decides, as it does for a run.
func (v Issue) Next(cfg config.Config) string {
	return engine.Next(v.Number, v.Record, true, engine.Facts{Closed: !v.Open, Unowned: v.Unowned, Labeler: v.Labeler}, cfg).Describe()
}

// Read reads issue n: one request for the issue with its comments, the permission checks that say
// whose status comment counts, and its lock.
func Read(ctx context.Context, gh Reader, cfg config.Config, n int, w Watch) (*Issue, error) {
	is, comments, err := gh.IssueWithComments(ctx, n)
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil, inputErrorf("issue #%d does not exist in %s/%s", n, gh.Owner(), gh.Repo())
	}
	if err != nil {
		return nil, err
	}
	if is.IsPull() {
		return nil, inputErrorf("#%d is a pull request; ralph works on issues", n)
	}
	v := &Issue{Number: n, Title: is.Title, URL: is.HTMLURL, Open: is.State == "open", UpdatedAt: is.UpdatedAt, Since: is.UpdatedAt}
	var warns []string
	v.Record, v.HasRecord, warns, err = FindRecord(ctx, gh, cfg, n, comments)
	if err != nil {
		return nil, err
	}
	v.Warnings = append(v.Warnings, warns...)
	v.State = v.Record.State
	if v.State == "" && !slices.Contains(is.LabelNames(), workflow.LabelBuild) {
		return nil, inputErrorf("#%d is not enrolled: run `gh ralph enroll %d` (or add the %s label)", n, n, workflow.LabelBuild)
	}
	if v.Lock, err = readLock(ctx, gh, n, w.Now); err != nil {
		return nil, err
	}
	if l := v.Record.Last; l != nil && l.To == v.State && !l.At.IsZero() {
		v.Since = l.At
	}
	states := workflow.StatesFromLabels(is.LabelNames())
	switch {
	case len(states) == 1 && startsFrom(engine.Transitions(), v.State, states[0]):
		// The label a step puts on while it runs: expected, not a disagreement (the lock says whether a run
		// holds the issue now).
		v.Running = states[0]
	case v.State == "" && len(states) > 0:
		v.Warnings = append(v.Warnings, fmt.Sprintf("the label %s is not backed by a record of ralph's: it enrolls nothing", joinLabels(states)))
	case v.State != "" && (len(states) != 1 || states[0] != v.State):
		v.Warnings = append(v.Warnings, fmt.Sprintf("the state labels (%s) disagree with ralph's record (%s); the next run puts them back", joinLabels(states), v.State.Label()))
	}
	if v.Lock != nil && v.Lock.Expired {
		v.Warnings = append(v.Warnings, fmt.Sprintf("stale lock: held by %s, lease expired %s ago; the next run takes it over", v.Lock.Holder, Elapsed(w.Now.Sub(v.Lock.Expires))))
	}
	if v.Running != "" && v.Lock == nil {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the label %s says a step runs, but no run holds the issue; the next run puts the label back and takes the step", v.Running.Label()))
	}
	v.Warnings = append(v.Warnings, stateWarnings(v.State, v.Since, w)...)
	// Who added ralph:build matters only to a sweep: when the issue has a step ralph could take now.
	if d := engine.Next(n, v.Record, true, engine.Facts{Closed: !v.Open}, cfg); d.Now() && !d.Running && v.Lock == nil && slices.Contains(is.LabelNames(), workflow.LabelBuild) {
		auth := engine.PermissionAuthorizer{Permission: gh.Permission, AllowedBots: cfg.AllowedBots}
		if v.Unowned, v.Labeler, err = engine.Unowned(ctx, gh, auth, is, nil); err != nil {
			return nil, err
		}
		if v.Unowned {
			v.Warnings = append(v.Warnings, unownedWarning(n, v.Labeler))
		}
	}
	return v, nil
}

// stateWarnings are what a person should look at in an issue's state: Human Needed, a lock state held too
// long, an issue stuck.
func stateWarnings(s workflow.State, since time.Time, w Watch) []string {
	age := w.Now.Sub(since)
	switch {
	case s == workflow.HumanNeeded:
		return []string{"a person is needed (gh ralph retry when fixed)"}
	case s.Kind() == workflow.Lock && age > staleLock:
		return []string{fmt.Sprintf("stale lock: %s for %s; the run that took it has likely stopped (the next advance redoes the step)", s.Title(), Elapsed(age))}
	case s.Kind() != workflow.Terminal && s != "" && age > w.Stale:
		return []string{fmt.Sprintf("stuck: %s for %s (longer than %s)", s.Title(), Elapsed(age), Elapsed(w.Stale))}
	}
	return nil
}

// Elapsed formats a duration as 42s, 1m12s, 5h03m or 3d4h.
func Elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	if d < time.Hour {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	if d < 48*time.Hour {
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	days, hours := int(d.Hours())/24, int(d.Hours())%24
	if hours == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, hours)
}

// Row is one enrolled open issue in the pipeline: its state (ralph's record's; for an issue ralph holds no
// record of, its label's), whether a run would start a step now, and what a person should look at.
type Row struct {
	Issue    ghapi.Issue
	State    workflow.State
	Ready    bool
	Record   *record.Record // nil: none yet
	Since    time.Time
	Warnings []string
	// Unowned: ralph:build counts for nobody (Unowned; Labeler added it), so no sweep takes the issue.
	// Read only for a ready issue.
	Unowned bool
	Labeler string
}

// Next is who or what moves the issue next: the planner decides, from ralph's record (from the state label,
// for an issue with none yet).
func (r Row) Next(cfg config.Config) string {
	rec := record.Record{State: r.State}
	if r.Record != nil {
		rec = *r.Record
	}
	return engine.Next(r.Issue.Number, rec, true, engine.Facts{Blockers: []int{}, Unowned: r.Unowned, Labeler: r.Labeler}, cfg).Short()
}

// Pipeline reads every enrolled open issue with its record, in workflow order (then oldest first):
// one request for the list, one per issue for its comments, and, for each issue a sweep would consider,
// one for who added ralph:build (with one permission check per person).
func Pipeline(ctx context.Context, gh Reader, cfg config.Config, w Watch) ([]Row, error) {
	issues, err := gh.Issues(ctx, ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}})
	if err != nil {
		return nil, fmt.Errorf("listing enrolled issues: %w", err)
	}
	recs, err := ReadRecords(ctx, gh, cfg, issues)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(issues))
	trusted := map[string]bool{}
	auth := engine.PermissionAuthorizer{Permission: gh.Permission, AllowedBots: cfg.AllowedBots}
	for _, is := range issues {
		r := Row{Issue: is, Ready: engine.Ready(is.LabelNames(), cfg), Record: recs[is.Number], Since: is.UpdatedAt}
		states := workflow.StatesFromLabels(is.LabelNames())
		if len(states) > 0 {
			r.State = states[0]
		}
		if len(states) > 1 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d state labels (%s)", len(states), joinLabels(states)))
		}
		if r.Record != nil {
			r.State = r.Record.State
			if l := r.Record.Last; l != nil && l.To == r.State && !l.At.IsZero() {
				r.Since = l.At
			}
		}
		r.Warnings = append(r.Warnings, stateWarnings(r.State, r.Since, w)...)
		if r.Ready {
			if r.Unowned, r.Labeler, err = engine.Unowned(ctx, gh, auth, is, trusted); err != nil {
				return nil, err
			}
			if r.Unowned {
				r.Warnings = append(r.Warnings, unownedWarning(is.Number, r.Labeler))
			}
		}
		if r.Record != nil && r.Record.Waiting != nil {
			r.Warnings = append(r.Warnings, r.Record.Waiting.Headline()+" The next sweep takes it first.")
		}
		rows = append(rows, r)
	}
	order := map[workflow.State]int{"": -1}
	for i, st := range workflow.States() {
		order[st] = i
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(order[a.State], order[b.State]) })
	return rows, nil
}

// startsFrom says whether running is the state a step takes the issue to from the record's state when it
// starts (from "", the one the enrollment puts it in, in the same run), by the workflow's moves.
func startsFrom(moves []workflow.Transition, from, running workflow.State) bool {
	if running.Kind() != workflow.Lock {
		return false
	}
	for _, tr := range moves {
		if tr.Event == workflow.Start && tr.To == running && (tr.From == from || from == "" && slices.Contains(moves, workflow.Transition{From: "", Event: workflow.Enroll, To: tr.From})) {
			return true
		}
	}
	return false
}

// FindRecord is issue n's record among its comments, read as a run reads it: only a status comment ralph
// (or someone with write access) wrote counts, and only a record ralph would have written. The warnings
// name what was passed over.
func FindRecord(ctx context.Context, gh Reader, cfg config.Config, n int, comments []ghapi.Comment) (record.Record, bool, []string, error) {
	may := engine.PermissionAuthorizer{Permission: gh.Permission, AllowedBots: cfg.AllowedBots}.Authorize
	identity := engine.OnceIdentity(gh.Viewer)
	f, err := record.Find(ctx, comments, cfg, engine.IsStep, func(ctx context.Context, u ghapi.User) (bool, error) {
		return engine.WroteRecord(ctx, u, may, identity)
	})
	if err != nil {
		return record.Record{}, false, nil, fmt.Errorf("#%d: %w", n, err)
	}
	return f.Record, f.Has(), f.Warnings(), nil
}

// ReadRecords reads each issue's record (none: not in the map): one request per issue (its comments), a few
// at a time.
func ReadRecords(ctx context.Context, gh Reader, cfg config.Config, issues []ghapi.Issue) (map[int]*record.Record, error) {
	out := make(map[int]*record.Record, len(issues))
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, is := range issues {
		g.Go(func() error {
			comments, err := gh.Comments(ctx, is.Number)
			if err != nil {
				return fmt.Errorf("reading comments of #%d: %w", is.Number, err)
			}
			rec, ok, _, err := FindRecord(ctx, gh, cfg, is.Number, comments)
			if err != nil || !ok {
				return err
			}
			mu.Lock()
			out[is.Number] = &rec
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

func joinLabels(states []workflow.State) string {
	var names []string
	for _, s := range states {
		names = append(names, s.Label())
	}
	return strings.Join(names, ", ")
}

// inputErrorf is bad input from a person (a missing issue, a pull request, an issue not enrolled), in the
// engine's type for it: the doors tell it from a failure.
func inputErrorf(format string, args ...any) error {
	return &engine.InputError{Msg: fmt.Sprintf(format, args...)}
}

// unownedWarning is what status warns of an issue whose ralph:build counts for nobody (engine.Unowned).
func unownedWarning(n int, who string) string {
	by := "no event says who added " + workflow.LabelBuild
	if who != "" {
		by = fmt.Sprintf("%s was added by @%s, who may not drive ralph", workflow.LabelBuild, who)
	}
	return fmt.Sprintf("%s: no sweep takes #%d until someone with write access runs gh ralph enroll %d (or adds the label again)", by, n, n)
}
