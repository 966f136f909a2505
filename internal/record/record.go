// Package record is what ralph remembers of an issue, kept at the end of its status comment: the record, its
// encoding, its check and its bounds, and Find, the one authorship-checked way every reader finds it.
package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/netproxy"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// StatusMarker starts the one status comment of an enrolled issue.
const StatusMarker = "<!-- ralph:status -->"

// IsStatus says whether body is a status comment: ralph's marker starts it.
func IsStatus(body string) bool { return strings.HasPrefix(body, StatusMarker) }

const (
	recordOpen  = "<!-- ralph:record"
	recordClose = "-->"
)

// Record is what ralph remembers between runs, kept as JSON in a hidden block of the status comment.
type Record struct {
	Version int            `json:"v"`
	State   workflow.State `json:"state"`
	// Before is the state an issue was in when it went to Human Needed; /ralph retry returns it there.
	Before workflow.State `json:"before,omitempty"`
	Branch string         `json:"branch,omitempty"`
	Base   string         `json:"base,omitempty"`
	Slug   string         `json:"slug,omitempty"`
	// Date fixes artifact file names at enrollment, so a later iteration rewrites the same file.
	Date string `json:"date,omitempty"`

	Phases           []Phase `json:"phases,omitempty"`
	PlanIterations   int     `json:"plan_iterations,omitempty"`
	ReviewIterations int     `json:"review_iterations,omitempty"`
	Feedback         string  `json:"feedback,omitempty"` // why the last plan was sent back

	FailedStep workflow.Event `json:"failed_step,omitempty"`
	Failures   int            `json:"failures,omitempty"` // consecutive failures of FailedStep
	Reason     string         `json:"reason,omitempty"`   // why a person is needed
	// Repair says how this run put the labels back to the record's state (someone had moved them).
	Repair string `json:"repair,omitempty"`
	// RulesRefused says a repository rule refused ralph's last push (GH013): until a step succeeds, each
	// step reads the rules before its agent runs.
	RulesRefused bool `json:"rules_refused,omitempty"`

	// Attempt is a step whose agent started and whose outcome is not recorded yet (the engine's ahead.go): it is
	// written, with the attempt counted as a failure, before the agent starts.
	Attempt *Attempt `json:"attempt,omitempty"`

	Artifacts map[string]Artifact `json:"artifacts,omitempty"` // research, plan, review, self-review, triage
	// Docs is ralph's documents branch, where the documents are kept apart from its branch
	// (documents: separate; "" when they are on the branch); DocsHead is the commit ralph last made
	// there, the only one it reads its documents at (the engine's docs.go).
	Docs     string `json:"docs,omitempty"`
	DocsHead string `json:"docs_head,omitempty"`
	// Children are the sub-issues a triage split this issue into; ChildDeps says which of them block which
	// (by number, as strings for JSON); ChildStates is what the parent last saw of them.
	Children    []int             `json:"children,omitempty"`
	ChildDeps   map[string][]int  `json:"child_deps,omitempty"`
	ChildStates map[string]string `json:"child_states,omitempty"`
	// Parent is the issue this one is a part of, when ralph's triage split it off.
	Parent int `json:"parent,omitempty"`
	// Split is a split the triage decided that waits for a person's approval (split.approve).
	Split *PendingSplit `json:"split,omitempty"`

	PR    int    `json:"pr,omitempty"`
	PRURL string `json:"pr_url,omitempty"`
	// Head is the commit ralph last pushed to the branch: a fix builds on it, and checks that failed on it
	// are ralph's to fix; a branch that moved since is a person's work, which ralph does not build over.
	Head string `json:"head,omitempty"`
	// Fix is the fix under way after the pull request (the engine's step_fix.go); ReviewRounds and CIFixes count the
	// rounds answered, CIDigest is what failed the last time.
	Fix          *FixRound `json:"fix,omitempty"`
	ReviewRounds int       `json:"review_rounds,omitempty"`
	CIFixes      int       `json:"ci_fixes,omitempty"`
	CIDigest     string    `json:"ci_digest,omitempty"`
	// ChecksBlocked: the pull request was opened with the Actions token, for which GitHub runs no checks.
	ChecksBlocked bool `json:"checks_blocked,omitempty"`
	// Required is how the checks the base's rules require (required_status_checks) stood on the commit
	// RequiredOn (ralph's head then) when ralph last read them: the status comment lists those not passing.
	Required   []RequiredCheck `json:"required,omitempty"`
	RequiredOn string          `json:"required_on,omitempty"`

	// Rounds counts the completed steps of each kind; with the step's name it keys the step's commit
	// (a Ralph-Step trailer) and comments, so that a rerun after a crash finds them instead of repeating them.
	Rounds map[string]int `json:"rounds,omitempty"`
	// Runs counts the runs recorded, for keys that must differ from run to run.
	Runs int `json:"runs,omitempty"`

	Last    *Entry  `json:"last,omitempty"`
	History []Entry `json:"history,omitempty"`
	Steps   []Done  `json:"done,omitempty"` // steps completed, in order (for the checklist)
	// Waiting says that a run ended without the run that goes on with the issue: GitHub did not take its
	// dispatch (the engine's waiting.go). The next sweep takes the issue first; the next run of the issue clears it.
	Waiting *SweepWait `json:"waiting,omitempty"`
	// Usage is the total of every run's agent usage.
	Usage *agent.Usage `json:"usage,omitempty"`
	// Refused are the hosts ralph's network proxy refused the agent and verify commands, each
	// once, at most MaxRefused (the engine's network.go).
	Refused []string `json:"refused,omitempty"`
}

// PendingSplit is a triage's split held for a person (split.approve). The triage's document is in ralph's
// triage comment (the notice Marker); Digest fixes that comment as ralph wrote it, so that what is created
// after the approval is what the person was shown, or nothing.
type PendingSplit struct {
	Marker string `json:"marker"`
	Digest string `json:"digest"`
	Parts  int    `json:"parts"`
	// ApprovedBy is the person who approved it; "" while it waits.
	ApprovedBy string `json:"approved_by,omitempty"`
}

// SweepWait is a run of the issue whose dispatch GitHub did not take: the issue waits for the next sweep.
type SweepWait struct {
	// Since is when the dispatch was given up.
	Since time.Time `json:"since"`
	// Step is the step the run was to take ("" when not known).
	Step workflow.Event `json:"step,omitempty"`
	// Finish: the run was to finish a step that GitHub failed (engine/finish.go), not to take the next.
	Finish bool `json:"finish,omitempty"`
}

// Headline says what was not started: "The next step (plan) was not started."
func (w SweepWait) Headline() string {
	switch {
	case w.Finish && w.Step != "":
		return fmt.Sprintf("The run to finish %s was not started.", w.Step)
	case w.Finish:
		return "The run to finish the step was not started."
	case w.Step != "":
		return fmt.Sprintf("The next step (%s) was not started.", w.Step)
	}
	return "The next step was not started."
}

// Detail says since when issue n waits, and what takes it.
func (w SweepWait) Detail(n int) string {
	return fmt.Sprintf("GitHub did not take the dispatch of its run (%s). The next sweep (the scheduled run with `command: sweep`) takes #%d first, before older issues; to go on sooner, run ralph's workflow with `issue: %d`.",
		w.Since.UTC().Format("2006-01-02 15:04 UTC"), n, n)
}

// FixRound is the fix under way, until the issue is back In Review: whom to answer, and where.
type FixRound struct {
	Cause   string  `json:"cause"`
	By      string  `json:"by,omitempty"`      // the person who asked (review, comment)
	Threads []int64 `json:"threads,omitempty"` // the first comment of each review thread the phase answers
	// Unchanged says why the agent changed nothing for a thread (by its number, from 1), as it answered in
	// its answers file; quoted inert in the reply.
	Unchanged map[string]string `json:"unchanged,omitempty"`
}

// RequiredCheck is how one check the base's rules require stands on ralph's last commit.
type RequiredCheck struct {
	Name  string `json:"name"`
	State string `json:"state"` // passing, failing, pending, missing
}

// Attempt is a step whose agent ralph started, as recorded before it started.
type Attempt struct {
	Step workflow.Event `json:"step"`
	// Reserved is what the step may spend (dollars): counted as spent against budget.issue when the
	// step's outcome is never recorded.
	Reserved float64 `json:"reserved,omitempty"`
}

// Phase is one "## Phase N:" section of the plan (or a fix phase added by self-review).
type Phase struct {
	Title string `json:"title"`
	Text  string `json:"text,omitempty"` // the section, for fix phases that are not in the plan file
	Fix   bool   `json:"fix,omitempty"`
	SHA   string `json:"sha,omitempty"` // the commit that did it; empty while to do
	// CostUSD is what the agent's run of a fix phase cost (the gateway's figure), shown with the phase.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Doc is the document on the branch that holds the rest of the phase's task (a self-review's
	// findings), read when the phase runs: the record keeps no long text.
	Doc string `json:"doc,omitempty"`
}

// Artifact is a document a step committed and posted.
type Artifact struct {
	Path    string `json:"path"`
	URL     string `json:"url,omitempty"`
	Comment string `json:"comment,omitempty"` // the artifact comment's link
	Verdict string `json:"verdict,omitempty"`
}

// Entry is one run of ralph on the issue, as the record keeps it and the status comment reports it.
type Entry struct {
	Step    workflow.Event `json:"step,omitempty"`
	From    workflow.State `json:"from,omitempty"`
	To      workflow.State `json:"to,omitempty"`
	At      time.Time      `json:"at"`
	URL     string         `json:"url,omitempty"`
	Outcome string         `json:"outcome"` // done, failed, waiting, ...
	Message string         `json:"message,omitempty"`
	Usage   *agent.Usage   `json:"usage,omitempty"` // what the agent reported, when one ran
	// Refused are the hosts ralph's network proxy refused the agent and the verify commands in this run
	// (host, or host:port for a port not allowed), each once, at most MaxRefused: the agent chose them.
	Refused []string `json:"refused,omitempty"`
}

// Done notes a completed step for the checklist.
type Done struct {
	Step workflow.Event `json:"step"`
	Note string         `json:"note,omitempty"`
}

// HistoryMax bounds the runs the record lists.
const HistoryMax = 20

// MaxRefused bounds the refused hosts the record keeps, the and a run's: as many as ralph's
// network proxy remembers.
const MaxRefused = netproxy.MaxRefused

// Note records a run: counted, its usage added, kept as the last run and in the history, its refused
// hosts gathered.
func (r *Record) Note(run Entry) {
	r.Runs++
	r.AddUsage(run.Usage)
	r.Last = &run
	// A run's refused hosts are kept on the last run alone, and gathered in r.Refused: the record lives
	// in a comment, whose size GitHub bounds.
	for i := range r.History {
		r.History[i].Refused = nil
	}
	r.History = append(r.History, run)
	if len(r.History) > HistoryMax {
		r.History = r.History[len(r.History)-HistoryMax:]
	}
	for _, h := range run.Refused {
		if len(r.Refused) < MaxRefused && !slices.Contains(r.Refused, h) {
			r.Refused = append(r.Refused, h)
		}
	}
}

// AddUsage adds a run's usage to the total.
func (r *Record) AddUsage(u *agent.Usage) {
	if u == nil {
		return
	}
	total := agent.Usage{}
	if r.Usage != nil {
		total = *r.Usage
	}
	total = total.Add(*u)
	// The limits describe single runs, not the total.
	total.HitTurnLimit, total.OverBudget, total.Budget = false, false, ""
	r.Usage = &total
}

// SetArtifact records the document a step of kind committed and posted.
func (r *Record) SetArtifact(kind string, a Artifact) {
	if r.Artifacts == nil {
		r.Artifacts = map[string]Artifact{}
	}
	r.Artifacts[kind] = a
}

// Clone copies the record, maps and slices included.
func (r Record) Clone() Record {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // Record holds only plain data
	}
	var c Record
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return c
}

// StepKey names the current round of a step kind: "plan/2".
func (r *Record) StepKey(kind string) string {
	return fmt.Sprintf("%s/%d", kind, r.Rounds[kind])
}

// DoneRound counts a completed step of kind.
func (r *Record) DoneRound(kind string) {
	if r.Rounds == nil {
		r.Rounds = map[string]int{}
	}
	r.Rounds[kind]++
}

// PhasesLeft is the phase to do next (ok false: none is left).
func (r *Record) PhasesLeft() (next int, ok bool) {
	for i, p := range r.Phases {
		if p.SHA == "" {
			return i, true
		}
	}
	return 0, false
}

// FixNext says whether the phase to do next is a fix round's (after the pull request: the fix step's).
func (r *Record) FixNext() bool {
	k, left := r.PhasesLeft()
	return left && r.Fix != nil && r.Phases[k].Fix
}

// PhasesDone counts the phases done.
func (r *Record) PhasesDone() int {
	n := 0
	for _, p := range r.Phases {
		if p.SHA != "" {
			n++
		}
	}
	return n
}

// Parse reads ralph's record from a status comment body. The record is the block at the body's very end,
// and nowhere else: ralph renders every other part of the comment, which may quote text that is not ralph's
// (a phase's title, a failure's reason, a file's name), before it, and that text can never carry "<!--"
// (see Inert). The block's JSON cannot hold "<", ">" or "-->" (json.Marshal escapes them), so the last opening
// of a block in the body is the start of ralph's own. ok is false when the body holds no block at all; a block
// that is not at the end, is not closed, or is not a record ralph wrote is an error.
func Parse(body string) (Record, bool, error) {
	body = strings.TrimRight(body, " \t\r\n")
	i := strings.LastIndex(body, recordOpen)
	if i < 0 {
		return Record{}, false, nil
	}
	block, ok := strings.CutSuffix(body[i+len(recordOpen):], recordClose)
	if !ok {
		return Record{}, false, errors.New("the record block is not at the end of the status comment")
	}
	if strings.Contains(block, recordClose) {
		return Record{}, false, errors.New("the record block is closed before the end of the status comment")
	}
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return Record{}, false, fmt.Errorf("the record block: %w", err)
	}
	if dec.More() {
		return Record{}, false, errors.New("the record block holds more than one record")
	}
	if r.Version != 1 {
		return Record{}, false, fmt.Errorf("the record block is of version %d; this ralph reads version 1", r.Version)
	}
	return r, true, nil
}

// Check refuses a record that ralph would not have written under cfg: a state that is not one, a branch
// that is the base branch or lies outside branch_prefix, a commit that is not a commit id, a step that
// isStep (the workflow's table, which the engine owns) says is not one of ralph's. A record of ralph's own
// always passes; one that a person with write access edited by hand may not, and goes to a person.
func (r Record) Check(cfg config.Config, isStep func(workflow.Event) bool) error {
	if r.State == "" || !slices.Contains(workflow.States(), r.State) {
		return fmt.Errorf("its state %q is not one of ralph's", r.State)
	}
	if r.Before != "" && !slices.Contains(workflow.States(), r.Before) {
		return fmt.Errorf("its state before Human Needed %q is not one of ralph's", r.Before)
	}
	if r.Branch != "" {
		switch {
		case !strings.HasPrefix(r.Branch, cfg.BranchPrefix) || len(r.Branch) == len(cfg.BranchPrefix):
			return fmt.Errorf("its branch %q is not under the branch prefix %q", r.Branch, cfg.BranchPrefix)
		case r.Branch == r.Base || (cfg.BaseBranch != "" && r.Branch == cfg.BaseBranch):
			return fmt.Errorf("its branch %q is the base branch", r.Branch)
		case !validBranch(r.Branch):
			return fmt.Errorf("its branch %q is not a branch name ralph makes", r.Branch)
		}
	}
	if r.Base != "" && !validBranch(r.Base) {
		return fmt.Errorf("its base branch %q is not a branch name", r.Base)
	}
	// The slug and the date name the documents' files, in the agent's copy and on the branch.
	if r.Slug != "" && !recordSlug.MatchString(r.Slug) {
		return fmt.Errorf("its slug %q is not one ralph makes", r.Slug)
	}
	if r.Date != "" && !recordDate.MatchString(r.Date) {
		return fmt.Errorf("its date %q is not a date", r.Date)
	}
	for i, p := range r.Phases {
		if p.SHA != "" && !isCommitID(p.SHA) {
			return fmt.Errorf("phase %d's commit %q is not a commit id", i+1, p.SHA)
		}
		if ControlInTitle(p.Title) {
			return fmt.Errorf("phase %d's title holds a control character", i+1)
		}
		// A fix phase reads the review that sent the branch back (the self-review's, the security review's): a
		// document ralph wrote and recorded, nothing else of the branch.
		if p.Doc != "" && !slices.ContainsFunc(slices.Collect(maps.Values(r.Artifacts)), func(a Artifact) bool { return a.Path == p.Doc }) {
			return fmt.Errorf("phase %d's document %q is not a review ralph recorded", i+1, p.Doc)
		}
	}
	if r.Head != "" && !isCommitID(r.Head) {
		return fmt.Errorf("its head %q is not a commit id", r.Head)
	}
	// The documents branch and its commit are arguments of ralph's git, and ralph pushes to the branch.
	if r.Docs != "" {
		switch {
		case !strings.HasPrefix(r.Docs, cfg.BranchPrefix) || r.Docs == r.Branch || r.Docs == r.Base || (cfg.BaseBranch != "" && r.Docs == cfg.BaseBranch):
			return fmt.Errorf("its documents branch %q is not one of ralph's own", r.Docs)
		case !validBranch(r.Docs):
			return fmt.Errorf("its documents branch %q is not a branch name ralph makes", r.Docs)
		}
	}
	if r.DocsHead != "" && !isCommitID(r.DocsHead) {
		return fmt.Errorf("its documents head %q is not a commit id", r.DocsHead)
	}
	if a := r.Attempt; a != nil && (a.Reserved < 0 || a.Reserved != a.Reserved) {
		return errors.New("its attempt reserves a negative amount")
	}
	if w := r.Waiting; w != nil && w.Step != "" && !isStep(w.Step) {
		return fmt.Errorf("its waiting step %q is not one of ralph's", w.Step)
	}
	if r.PR < 0 || r.Parent < 0 || r.Failures < 0 || r.CIFixes < 0 || r.ReviewRounds < 0 {
		return errors.New("it holds a negative number")
	}
	for _, c := range r.Children {
		if c <= 0 {
			return fmt.Errorf("its sub-issue %d is not an issue number", c)
		}
	}
	return nil
}

// recordSlug and recordDate are what Slug and the enrolling run's date make.
var (
	recordSlug = regexp.MustCompile(`^[a-z0-9-]+$`)
	recordDate = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// validBranch is what ralph's own branch names (branch_prefix, the number, a slug) and a base branch
// are made of: a branch name git takes, with nothing a shell or git would read as more.
func validBranch(s string) bool { return s != "" && config.CheckBranch(s) == "" }

func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Encode writes r as the hidden block that ends the status comment (Parse reads it back).
func Encode(r Record) string {
	r.Version = 1
	// json.Marshal escapes <, > and &, so the block can never contain "-->".
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		panic(err) // Record holds only plain data
	}
	return recordOpen + "\n" + jsonEscape.ReplaceAllStringFunc(string(b), controlPicture) + "\n" + recordClose
}

// jsonEscape is one escape of a JSON string, as json.Marshal writes them (a backslash outside a string
// never occurs), so that matching them from the left finds each escape whole.
var jsonEscape = regexp.MustCompile(`\\(u[0-9a-f]{4}|.)`)

// controlPicture writes the escape of a C0 control character as the character's picture (U+2400 + c, "␇"
// for a bell). ralph reads its status comment through go-gh, whose transport rewrites each "\u00XX" escape
// of a control character in a JSON answer, and the backslash before it, as caret notation: inside the
// comment's body such an escape in the record is "\\u0007", which came back "\^G", and a record quoting a
// control character (a phase's title, a reason) could not be read. A control character shows nothing in a
// comment, and its picture reads the same. Other escapes ("\n", "\"", "\u003c") are kept.
func controlPicture(esc string) string {
	if len(esc) == 6 && strings.HasPrefix(esc, `\u00`) && (esc[4] == '0' || esc[4] == '1') {
		c, _ := strconv.ParseUint(esc[4:], 16, 8)
		return string(rune(0x2400 + c))
	}
	return esc
}

// MaxPhaseTitle bounds a phase's title: it is a commit's subject and a line of the record.
const MaxPhaseTitle = 200

// ControlInTitle says whether a phase's title holds a control character (a tab aside). The title is an
// argument of ralph's git, the message of the phase's commit, which cannot hold a NUL; and it is a line.
func ControlInTitle(title string) bool {
	return strings.ContainsFunc(title, func(c rune) bool { return unicode.IsControl(c) && c != '\t' })
}
