package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Result is what one run did to one issue.
type Result struct {
	Issue int
	Step  workflow.Event // the step that ran (or would run, in a dry run); "" when none
	From  workflow.State
	State workflow.State
	PRURL string
	// Paused: the issue now waits for a person (a gate).
	Paused bool
	// Continue: another step can run right away, so the Action dispatches its workflow again.
	Continue bool
	Message  string
	Held     bool // another run holds the issue; nothing was done
	// Usage is what the agent used in the step (nil when no agent ran, or it ran without the gateway and
	// reports nothing); Total is the issue's total so far.
	Usage, Total *agent.Usage
	// Budget names the budget that stopped the step ("budget.issue", …): the issue now waits for a person.
	Budget string
	// Dispatch lists other issues that can take a step now because of this one: sub-issues a split created
	// or unblocked, or the parent of a sub-issue that moved. The Action dispatches a run for each.
	Dispatch []int
}

// issue is everything a run reads of one issue before it acts.
type issue struct {
	n        int
	gh       ghapi.Issue
	comments []ghapi.Comment
	status   *ghapi.Comment
	rec      Record
	state    workflow.State       // from the record ("" = not enrolled); the labels are repaired to it
	stray    []workflow.State     // state labels on an issue ralph holds no record of
	repaired bool                 // the labels disagreed with the record and were put back (rec.Repair says how)
	trusted  map[string]bool      // logins whose permission this run has checked
	takeover string               // the stale lock holder this run took over from
	to       workflow.State       // the step's outcome, recorded by commit
	saved    *Record              // the record as the step began, restored when the step fails
	ws       *workspace.Workspace // the agent's copy of the step, once made
	usage    *agent.Usage         // what the agent reported of this run's step (usage.go)
}

// errLockLost cancels a step whose lease another run took over.
var errLockLost = errors.New("another run took over this issue's lock (the lease expired)")

// dryRun says what Advance would do, writing nothing.
func (e *Engine) dryRun(ic *issue) (Result, error) {
	if ic.state == "" {
		if !slices.Contains(ic.gh.LabelNames(), workflow.LabelBuild) {
			return Result{Issue: ic.n}, ErrNotEnrolled
		}
		if len(ic.stray) > 1 {
			return Result{Issue: ic.n}, inputErrorf("#%d has %d state labels (%s) and no record of ralph's; a real run sends it to a person", ic.n, len(ic.stray), joinStates(ic.stray))
		}
		ic.state = FirstState(e.Config)
		ic.rec.State = ic.state
	}
	return e.step(context.Background(), ic)
}

// Advance performs the next step of issue n: enrollment first when ralph:build is on an issue ralph holds
// no record of.
func (e *Engine) Advance(ctx context.Context, n int) (Result, error) {
	gi, err := e.peek(ctx, n)
	if err != nil {
		return Result{Issue: n}, err
	}
	if len(workflow.StatesFromLabels(gi.LabelNames())) == 0 && !slices.Contains(gi.LabelNames(), workflow.LabelBuild) {
		return Result{Issue: n}, ErrNotEnrolled
	}
	return e.advance(ctx, gi, nil)
}

// ClosedPull is a pull request that was closed (merged or not), as its event names it.
type ClosedPull struct {
	Number int
	Head   string // its head branch
	// SameRepo: the head branch is in this repository (not a fork's).
	SameRepo bool
}

// PullClosed takes the merge step of issue n for a pull request that was closed, and only when ralph's
// record of n names that pull request: n is enrolled and In Review, and the pull request is the one ralph
// opened from n's branch in this repository. It never enrolls an issue and never runs the agent: anyone
// who can open a pull request can close one, and write what they like in its body.
func (e *Engine) PullClosed(ctx context.Context, n int, pr ClosedPull) (Result, error) {
	gi, err := e.peek(ctx, n)
	if err != nil {
		return Result{Issue: n}, err
	}
	if len(workflow.StatesFromLabels(gi.LabelNames())) == 0 && !slices.Contains(gi.LabelNames(), workflow.LabelBuild) {
		return Result{Issue: n, Message: fmt.Sprintf("#%d is not enrolled; a pull request enrolls nothing", n)}, nil
	}
	return e.advance(ctx, gi, func(ic *issue) string {
		switch {
		case ic.state == "":
			return fmt.Sprintf("#%d is not enrolled (ralph holds no record of it); a pull request enrolls nothing", n)
		case !pr.SameRepo || pr.Head != ic.rec.Branch || (ic.rec.PR != 0 && ic.rec.PR != pr.Number):
			return fmt.Sprintf("pull request #%d (%s) is not the one ralph opened for #%d from %s; nothing to do", pr.Number, pr.Head, n, ic.rec.Branch)
		case ic.state != workflow.InReview:
			return fmt.Sprintf("#%d is %s, not In Review: a closed pull request moves it only from In Review", n, ic.state.Title())
		}
		return ""
	})
}

// advance runs the next step of the issue gi (read before the lock). gate, when set, is asked under the
// lock, once the record is read: a reason not to go on, or "" to go on; an issue ralph holds no record of
// passes only a nil gate, which enrolls it.
func (e *Engine) advance(ctx context.Context, gi ghapi.Issue, gate func(*issue) string) (Result, error) {
	n := gi.Number
	if e.DryRun {
		ic, err := e.loadFrom(ctx, gi)
		if err != nil {
			return Result{Issue: n}, err
		}
		if gate != nil {
			if why := gate(ic); why != "" {
				return Result{Issue: n, From: ic.state, State: ic.state, Message: why}, nil
			}
		}
		return e.dryRun(ic)
	}
	lease, err := e.Lock.Acquire(ctx, n)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			state := workflow.State("")
			if st := workflow.StatesFromLabels(gi.LabelNames()); len(st) == 1 {
				state = st[0]
			}
			msg := fmt.Sprintf("#%d is held by %s; nothing to do", n, held.Holder)
			e.Log.Infof("%s", msg)
			return Result{Issue: n, From: state, State: state, Held: true, Message: msg}, nil
		}
		return Result{Issue: n}, fmt.Errorf("locking #%d: %w", n, err)
	}
	defer func() {
		if rerr := lease.Release(context.WithoutCancel(ctx)); rerr != nil {
			e.Log.Warnf("releasing the lock on #%d: %v", n, rerr)
		}
	}()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-lease.Lost():
			cancel(errLockLost)
		case <-ctx.Done():
		}
	}()
	// Read the record under the lock: a run that held it until a moment ago may have moved the issue on.
	ic, err := e.loadFrom(ctx, gi)
	if err != nil {
		return Result{Issue: n}, err
	}
	if t := lease.TookOver(); t != "" {
		ic.takeover = t
		e.Log.Warnf("#%d: took over a stale lock held by %s", n, t)
	}
	if gate != nil {
		if why := gate(ic); why != "" {
			e.Log.Infof("%s", why)
			res := Result{Issue: n, From: ic.state, State: ic.state, Message: why}
			if ic.state != "" {
				err = e.flush(ctx, ic)
			}
			return res, err
		}
	}
	if ic.state == "" {
		switch {
		case !slices.Contains(ic.gh.LabelNames(), workflow.LabelBuild):
			return Result{Issue: n}, ErrNotEnrolled
		case len(ic.stray) > 1:
			err = e.confused(ctx, ic)
		default:
			err = e.enroll(ctx, ic)
		}
		if err != nil {
			return Result{Issue: n}, err
		}
	}
	res, err := e.step(ctx, ic)
	if ic.ws != nil {
		if cerr := ic.ws.Close(); cerr != nil {
			e.Log.Warnf("#%d: removing the agent's copy: %v", n, cerr)
		}
	}
	if err == nil && ic.state != "" {
		err = e.flush(ctx, ic)
	}
	res.Usage, res.Total = ic.usage, ic.rec.Usage
	return res, err
}

// peek reads the issue and refuses what ralph cannot work on.
func (e *Engine) peek(ctx context.Context, n int) (ghapi.Issue, error) {
	if n <= 0 {
		return ghapi.Issue{}, inputErrorf("%d is not an issue number", n)
	}
	gi, err := e.GitHub.Issue(ctx, n)
	if errors.Is(err, ghapi.ErrNotFound) {
		return gi, inputErrorf("issue #%d does not exist in this repository", n)
	}
	if err != nil {
		return gi, fmt.Errorf("reading #%d: %w", n, err)
	}
	if gi.IsPull() {
		return gi, inputErrorf("#%d is a pull request; ralph works on issues", n)
	}
	return gi, nil
}

// load reads the issue, its comments and its status record, and repairs the state labels when a crash or a
// person left them inconsistent.
func (e *Engine) load(ctx context.Context, n int) (*issue, error) {
	gi, err := e.peek(ctx, n)
	if err != nil {
		return nil, err
	}
	return e.loadFrom(ctx, gi)
}

// loadFrom is load with the issue already read. The issue may have been read before the lock was taken:
// when its labels disagree with the record (read now, under the lock), the issue is read again before the
// labels are trusted, since the run that held the lock may have moved them.
func (e *Engine) loadFrom(ctx context.Context, gi ghapi.Issue) (*issue, error) {
	n := gi.Number
	comments, err := e.GitHub.Comments(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("reading comments of #%d: %w", n, err)
	}
	ic := &issue{n: n, gh: gi, comments: comments}
	if err := e.findStatus(ctx, ic); err != nil {
		return nil, err
	}
	if ic.status != nil {
		rec, ok, err := ParseRecord(ic.status.Body)
		if err != nil {
			e.Log.Warnf("#%d: %v; starting a new record", n, err)
		} else if ok {
			ic.rec = rec
		}
	}
	ic.rec.Repair = "" // said once, by the run that repaired the labels
	if ic.rec.Parent == 0 {
		ic.rec.Parent, _, _ = parseParent(gi.Body)
	}
	if st := workflow.StatesFromLabels(gi.LabelNames()); ic.rec.State != "" && (len(st) != 1 || st[0] != ic.rec.State) {
		if ic.gh, err = e.peek(ctx, n); err != nil {
			return nil, err
		}
	}
	if err := e.resolveState(ctx, ic); err != nil {
		return nil, err
	}
	return ic, nil
}

// resolveState takes the issue's state from ralph's record: labels are a view of it, which anyone with
// triage permission can change, so labels that disagree with the record are put back, and the status
// comment says so. An issue ralph holds no record of is not enrolled, whatever its labels say.
func (e *Engine) resolveState(ctx context.Context, ic *issue) error {
	states := workflow.StatesFromLabels(ic.gh.LabelNames())
	rec := ic.rec.State
	if rec == "" || (len(states) == 0 && !slices.Contains(ic.gh.LabelNames(), workflow.LabelBuild)) {
		ic.state, ic.stray = "", states
		if len(states) > 0 {
			e.Log.Infof("#%d has the label %s but no record of ralph's: the label enrolls nothing", ic.n, joinStates(states))
		}
		return nil
	}
	ic.state = rec
	if len(states) == 1 && states[0] == rec {
		return nil
	}
	if ralphsOwn(ic.rec, states) {
		// A run stopped between its writes: the label shows a move of ralph's own that the record has
		// settled (a step under way, or its outcome recorded and the label not yet moved).
		e.Log.Warnf("#%d: the label says %s, ralph's record %s (a run stopped before it moved the label); repairing the label", ic.n, joinStates(states), rec.Title())
	} else {
		ic.rec.Repair, ic.repaired = repairNote(states, rec), true
		e.Log.Warnf("#%d: %s", ic.n, ic.rec.Repair)
	}
	if e.DryRun {
		return nil
	}
	return e.setState(ctx, ic, rec)
}

// ralphsOwn says whether the one state label is where ralph itself leaves an issue between two writes: the
// lock state of the step the record calls for, or where the last recorded run started from.
func ralphsOwn(rec Record, states []workflow.State) bool {
	if len(states) != 1 {
		return false
	}
	label := states[0]
	for _, r := range steps {
		if r.From == rec.State && r.Running != "" && r.Running == label {
			return true
		}
	}
	last := rec.Last
	return last != nil && last.To == rec.State && (last.From == label || running(last.Step) == label)
}

// repairNote says, in the status comment, what was wrong with the labels and what ralph did.
func repairNote(states []workflow.State, rec workflow.State) string {
	var was string
	switch len(states) {
	case 0:
		was = "The issue had no state label"
	case 1:
		was = fmt.Sprintf("The state label was `%s`", states[0].Label())
	default:
		was = fmt.Sprintf("The state labels were %s", joinStates(states))
	}
	return fmt.Sprintf("%s, which is not what ralph's record says; ralph put back `%s`. Labels show where an issue is: moving one does not move the issue (the steps and the commands below do).", was, rec.Label())
}

// confused sends an issue being enrolled to a person when it already carries several state labels that no
// record of ralph's explains: nothing says which, if any, is right.
func (e *Engine) confused(ctx context.Context, ic *issue) error {
	reason := fmt.Sprintf("The issue had %d state labels (%s) and ralph holds no record that says which is right. Remove the wrong ones and say `/ralph retry`.", len(ic.stray), joinStates(ic.stray))
	if err := e.needsPerson(ctx, ic, "", reason, "labels", "### ralph needs a person\n\n"+reason); err != nil {
		return err
	}
	ic.to = ""
	if err := e.setState(ctx, ic, workflow.HumanNeeded); err != nil {
		return err
	}
	return e.saveStatus(ctx, ic)
}

func joinStates(states []workflow.State) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = "`" + s.Label() + "`"
	}
	return strings.Join(names, ", ")
}

// setState makes `to` the issue's only state label, in one request that sets the issue's whole label list.
func (e *Engine) setState(ctx context.Context, ic *issue, to workflow.State) error {
	labels := ic.gh.LabelNames()
	want := make([]string, 0, len(labels)+1)
	for _, l := range labels {
		if s, ok := workflow.StateFromLabel(l); !ok || s == to {
			want = append(want, l)
		}
	}
	if !slices.Contains(want, to.Label()) {
		want = append(want, to.Label())
	}
	if !slices.Equal(labels, want) {
		if err := e.GitHub.SetLabels(ctx, ic.n, want); err != nil {
			return fmt.Errorf("labeling #%d %s: %w", ic.n, to.Label(), err)
		}
		ic.gh.Labels = ic.gh.Labels[:0]
		for _, l := range want {
			ic.gh.Labels = append(ic.gh.Labels, ghapi.Label{Name: l})
		}
	}
	from := ic.state
	ic.state = to
	ic.rec.State = to
	if e.OnState != nil && from != to {
		if err := e.OnState(ctx, ic.gh.NodeID, ic.n, to); err != nil {
			e.Log.Warnf("#%d: updating the project board: %v", ic.n, err)
		}
	}
	return nil
}

// commit records a run: the status comment with the new state first, then the labels. A crash between the
// two leaves labels that the next run repairs from the record (see resolveState).
func (e *Engine) commit(ctx context.Context, ic *issue, run Run) error {
	to := ic.to
	if to == "" {
		to = ic.state
	}
	ic.rec.State = to
	if run.Usage == nil {
		run.Usage = ic.usage
	}
	ic.rec.note(run)
	if err := e.saveStatus(ctx, ic); err != nil {
		return err
	}
	e.checkpoint("after-status")
	if err := e.setState(ctx, ic, to); err != nil {
		return err
	}
	ic.to = ""
	e.checkpoint("after-label")
	return nil
}

// notice posts a comment once: a repeated run (after a crash) finds it by its key and edits it instead.
func (e *Engine) notice(ctx context.Context, ic *issue, key, body string) error {
	_, err := e.upsertComment(ctx, ic, "<!-- ralph:notice "+key+" -->", body)
	return err
}

// upsertComment creates the comment that carries marker, or edits the one that does.
func (e *Engine) upsertComment(ctx context.Context, ic *issue, marker, body string) (ghapi.Comment, error) {
	if !strings.Contains(body, marker) {
		body = body + "\n\n" + marker
	}
	// Only a comment of ralph's own: anyone can post one that carries the marker.
	i, err := e.ownComment(ctx, ic, func(b string) bool { return strings.Contains(b, marker) })
	if err != nil {
		return ghapi.Comment{}, err
	}
	if i < 0 {
		return e.createComment(ctx, ic, marker, body)
	}
	if c := ic.comments[i]; c.Body == body {
		return c, nil
	}
	cm, err := e.GitHub.UpdateComment(ctx, ic.comments[i].ID, body)
	if err == nil {
		ic.comments[i] = cm
	}
	return cm, err
}

// createComment posts a comment that carries marker. When the answer is an error, GitHub may have posted it
// all the same (a 502 after the write): ralph looks for the marker before it tries once more, so the
// comment is never there twice.
func (e *Engine) createComment(ctx context.Context, ic *issue, marker, body string) (ghapi.Comment, error) {
	cm, err := e.GitHub.CreateComment(ctx, ic.n, body)
	if err != nil {
		if ctx.Err() != nil {
			return cm, err
		}
		comments, lerr := e.GitHub.Comments(ctx, ic.n)
		if lerr != nil {
			return cm, err
		}
		found := false
		for _, c := range comments {
			if !strings.Contains(c.Body, marker) {
				continue
			}
			if own, aerr := e.authored(ctx, ic, c); aerr == nil && own {
				cm, found = c, true
			}
		}
		first := err
		if !found {
			if cm, err = e.GitHub.CreateComment(ctx, ic.n, body); err != nil {
				return cm, err
			}
		}
		e.Log.Warnf("#%d: posting a comment: %v (recovered)", ic.n, first)
	}
	ic.comments = append(ic.comments, cm)
	return cm, nil
}

// checkpoint marks a point between two writes; tests stop the process there to prove a rerun repairs it.
func (e *Engine) checkpoint(name string) {
	if e.Checkpoint != nil {
		e.Checkpoint(name)
	}
}

func (e *Engine) toggleLabel(ctx context.Context, ic *issue, label string, on bool) error {
	has := slices.Contains(ic.gh.LabelNames(), label)
	switch {
	case on && !has:
		if err := e.GitHub.AddLabels(ctx, ic.n, label); err != nil {
			return err
		}
		ic.gh.Labels = append(ic.gh.Labels, ghapi.Label{Name: label})
	case !on && has:
		if err := e.GitHub.RemoveLabel(ctx, ic.n, label); err != nil {
			return err
		}
		ic.gh.Labels = slices.DeleteFunc(ic.gh.Labels, func(l ghapi.Label) bool { return l.Name == label })
	}
	return nil
}

// FirstState is where enrollment puts an issue under config c.
func FirstState(c config.Config) workflow.State {
	switch {
	case c.Triage:
		return workflow.Backlog
	case c.Research:
		return workflow.ResearchNeeded
	}
	return workflow.ReadyForPlan
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a branch- and file-name-safe short form of an issue title, one that forms no reference to
// another issue (see inertSlug).
func Slug(title string) string {
	s := inertSlug(strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-"))
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "issue"
	}
	return s
}

// enroll is bookkeeping, not a step: the first state and the branch name. The labels and the status comment
// are written by the step that follows (its lock state, or its outcome), or by flush when no step runs, so
// that enrolling costs no request of its own.
func (e *Engine) enroll(ctx context.Context, ic *issue) error {
	to := FirstState(e.Config)
	e.fillRecord(ic)
	if err := workflow.Check("", workflow.Enroll, to); err != nil {
		return err
	}
	ic.state, ic.rec.State = to, to
	ic.rec.note(Run{Step: workflow.Enroll, To: to, At: e.now(), URL: e.Run.URL, Outcome: "done", Message: "enrolled"})
	e.Log.Infof("#%d enrolled: %s", ic.n, to.Title())
	return nil
}

// flush writes what a run decided but no step recorded: the state label and the status comment of an issue
// enrolled by a run that then ran no step, and the note of labels repaired by a run that ran none.
func (e *Engine) flush(ctx context.Context, ic *issue) error {
	if st := workflow.StatesFromLabels(ic.gh.LabelNames()); len(st) != 1 || st[0] != ic.state {
		if err := e.setState(ctx, ic, ic.state); err != nil {
			return err
		}
	}
	if ic.status == nil || ic.repaired {
		return e.saveStatus(ctx, ic)
	}
	return nil
}

func (e *Engine) fillRecord(ic *issue) {
	if ic.rec.Slug == "" {
		ic.rec.Slug = Slug(ic.gh.Title)
	}
	if ic.rec.Branch == "" {
		ic.rec.Branch = e.Config.BranchPrefix + strconv.Itoa(ic.n) + "-" + ic.rec.Slug
	}
	if ic.rec.Date == "" {
		ic.rec.Date = e.now().Format("2006-01-02")
	}
}
