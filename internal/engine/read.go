package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// checkNumber refuses what is not an issue number.
func checkNumber(n int) error {
	if n <= 0 {
		return inputErrorf("%d is not an issue number", n)
	}
	return nil
}

// reader is the first stage of a run: it reads an issue the way a run must believe it (ralph's own status
// comment, a record that passes Record.check, labels repaired to the record), fails closed on a record it
// cannot use, and admits an issue ralph holds no record of (enroll).
type reader struct {
	gh     GitHub
	cfg    config.Config
	log    Logger
	people func() *people // one for each issue the reader reads
	dryRun bool
	now    func() time.Time
	runURL string
	writer func(n int, gi ghapi.Issue, ppl *people, comments []ghapi.Comment, status *ghapi.Comment) *writer // the one writer of each issue it reads
	steps  *table
}

func (e *Engine) reader() reader {
	return reader{gh: e.GitHub, cfg: e.Config, log: e.Log, people: e.people, dryRun: e.DryRun, now: e.now, runURL: e.Origin.URL, writer: e.newWriter, steps: e.table()}
}

// load reads the issue with its comments (one request) and its status record, refuses what ralph cannot
// work on, and repairs the state labels when a crash or a person left them inconsistent. A run reads it
// under the issue's lock, so what it reads is what the last run left. With login, it also learns, in the
// same request where GitHub can tell, whether login may drive ralph (ic.people vouches for them). The
// issue it returns is the run's to go on with.
func (r reader) load(ctx context.Context, n int, login string) (issue, error) {
	if err := checkNumber(n); err != nil {
		return issue{}, err
	}
	var (
		gi       ghapi.Issue
		comments []ghapi.Comment
		role     string
		err      error
	)
	if rf, ok := r.gh.(IssueReaderFor); ok && login != "" {
		gi, comments, role, err = rf.IssueWithCommentsFor(ctx, n, login)
	} else {
		gi, comments, err = r.gh.IssueWithComments(ctx, n)
	}
	if errors.Is(err, ghapi.ErrNotFound) {
		return issue{}, inputErrorf("issue #%d does not exist in this repository", n)
	}
	if err != nil {
		return issue{}, fmt.Errorf("reading #%d: %w", n, err)
	}
	if gi.IsPull() {
		return issue{}, inputErrorf("#%d is a pull request; ralph works on issues", n)
	}
	ppl := r.people()
	if login != "" && !strings.HasSuffix(login, "[bot]") && slices.Contains([]string{"admin", "maintain", "write"}, role) {
		// GitHub named the role: the person may drive ralph, and is not asked about again in this run.
		ppl.vouch(login)
	}
	found, err := ppl.Find(ctx, n, comments, r.cfg)
	if err != nil {
		return issue{}, err
	}
	w := r.writer(n, gi, ppl, comments, found.Status)
	var (
		rec        Record
		unrecorded *Attempt
	)
	if found.Status != nil {
		if found.Unusable != nil {
			return issue{}, r.unreadable(ctx, w, found.Unusable)
		}
		rec, unrecorded = foldAttempt(found.Record)
	}
	rec.Repair = "" // said once, by the run that repaired the labels
	if rec.Parent == 0 {
		if rec.Parent, _, _, err = ppl.ParentOf(ctx, n, gi); err != nil {
			return issue{}, err
		}
	}
	return r.resolveState(ctx, issue{n: n, gh: gi, w: w, people: ppl, rec: rec, unrecorded: unrecorded})
}

// resolveState takes the issue's state from ralph's record: labels are a view of it, which anyone with
// triage permission can change, so labels that disagree with the record are put back, and the status
// comment says so. An issue ralph holds no record of is not enrolled, whatever its labels say. It returns
// the issue in its state.
func (r reader) resolveState(ctx context.Context, ic issue) (issue, error) {
	states := workflow.StatesFromLabels(ic.gh.LabelNames())
	rec := ic.rec.State
	if rec == "" || (len(states) == 0 && !ic.enrollable()) {
		if len(states) > 0 {
			r.log.Infof("#%d has the label %s but no record of ralph's: the label enrolls nothing", ic.n, joinStates(states))
		}
		ic.state, ic.stray = "", states
		return ic, nil
	}
	ic.state = rec
	if len(states) == 1 && states[0] == rec {
		return ic, nil
	}
	if a := ic.unrecorded; a != nil && len(states) == 1 && states[0] == workflow.HumanNeeded {
		// The run that started the agent could not record the outcome and asked for a person with the
		// label alone (ahead.go): the issue waits for them.
		ic = ic.in(workflow.HumanNeeded)
		ic.rec.Before = r.steps.RestartState(rec)
		ic.rec.Reason = fmt.Sprintf("ralph could not record the outcome of the %s step; the agent's attempt is counted as a failure.", a.Step)
		return ic, nil
	}
	if ralphsOwn(r.steps, ic.rec, states) {
		// A run stopped between its writes: the label shows a move of ralph's own that the record has
		// settled (a step under way, or its outcome recorded and the label not yet moved).
		r.log.Warnf("#%d: the label says %s, ralph's record %s (a run stopped before it moved the label); repairing the label", ic.n, joinStates(states), rec.Title())
	} else {
		ic.rec.Repair, ic.repaired = repairNote(states, rec), true
		r.log.Warnf("#%d: %s", ic.n, ic.rec.Repair)
	}
	if r.dryRun {
		return ic, nil
	}
	return ic.w.setState(ctx, ic, rec)
}

// ralphsOwn says whether the one state label is where ralph itself leaves an issue between two writes: the
// lock state of the step the record calls for, or where the last recorded run started from.
func ralphsOwn(t *table, rec Record, states []workflow.State) bool {
	if len(states) != 1 {
		return false
	}
	label := states[0]
	for _, r := range t.Steps() {
		if r.From == rec.State && r.Running != "" && r.Running == label {
			return true
		}
	}
	last := rec.Last
	return last != nil && last.To == rec.State && (last.From == label || t.Running(last.Step) == label)
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

func joinStates(states []workflow.State) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = "`" + s.Label() + "`"
	}
	return strings.Join(names, ", ")
}

// RecordError is a status comment whose record ralph cannot read or would not have written. ralph never
// starts such an issue over (that would forget where it was, and redo or undo work): it leaves the comment
// as it is, labels the issue Human Needed, and says once what a person can do.
type RecordError struct {
	Issue int
	URL   string // the status comment
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("#%d: ralph cannot use the record in its status comment (%s): %v; a person must repair the comment (or delete it to start the issue over)", e.Issue, e.URL, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// unreadable fails closed on a status comment ralph cannot use: nothing of the issue moves but its label, to
// Human Needed, and one comment says why and what to do. w is the issue's writer, with that comment.
func (r reader) unreadable(ctx context.Context, w *writer, cause error) error {
	st := w.Status()
	rerr := &RecordError{Issue: w.n, URL: st.HTMLURL, Err: cause}
	r.log.Warnf("%v", rerr)
	if r.dryRun {
		return rerr
	}
	body := fmt.Sprintf("### ralph: a person is needed\n\nralph cannot use the record at the end of [its status comment](%s): %s. "+
		"It changes nothing of this issue until a person repairs that comment (as ralph last wrote it: the comment's history shows each edit) or deletes it, which starts the issue over from its labels.",
		st.HTMLURL, Inert(cause.Error()))
	marker := "<!-- ralph:notice record " + strconv.FormatInt(st.ID, 10) + " -->"
	if _, err := w.UpsertComment(ctx, marker, body); err != nil {
		return errors.Join(rerr, err)
	}
	// No issue is read yet: the label moves from no state of ralph's (the board learns it too).
	if _, err := w.setState(ctx, issue{n: w.n}, workflow.HumanNeeded); err != nil {
		return errors.Join(rerr, err)
	}
	return rerr
}
