package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// StatusMarker starts the one status comment of an enrolled issue.
const StatusMarker = "<!-- ralph:status -->"

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

	Artifacts map[string]Artifact `json:"artifacts,omitempty"` // research, plan, review, self-review, triage
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

	// Rounds counts the completed steps of each kind; with the step's name it keys the step's commit
	// (a Ralph-Step trailer) and comments, so that a rerun after a crash finds them instead of repeating them.
	Rounds map[string]int `json:"rounds,omitempty"`
	// Runs counts the runs recorded, for keys that must differ from run to run.
	Runs int `json:"runs,omitempty"`

	Last    *Run   `json:"last,omitempty"`
	History []Run  `json:"history,omitempty"`
	Steps   []Done `json:"done,omitempty"` // steps completed, in order (for the checklist)
	// Usage is the total of every run's agent usage.
	Usage *agent.Usage `json:"usage,omitempty"`
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

// Phase is one "## Phase N:" section of the plan (or a fix phase added by self-review).
type Phase struct {
	Title string `json:"title"`
	Text  string `json:"text,omitempty"` // the section, for fix phases that are not in the plan file
	Fix   bool   `json:"fix,omitempty"`
	SHA   string `json:"sha,omitempty"` // the commit that did it; empty while to do
}

// Artifact is a document a step committed and posted.
type Artifact struct {
	Path    string `json:"path"`
	URL     string `json:"url,omitempty"`
	Comment string `json:"comment,omitempty"` // the artifact comment's link
	Verdict string `json:"verdict,omitempty"`
}

// Run is one run of ralph on the issue, as the status comment reports it.
type Run struct {
	Step    workflow.Event `json:"step,omitempty"`
	From    workflow.State `json:"from,omitempty"`
	To      workflow.State `json:"to,omitempty"`
	At      time.Time      `json:"at"`
	URL     string         `json:"url,omitempty"`
	Outcome string         `json:"outcome"` // done, failed, waiting, ...
	Message string         `json:"message,omitempty"`
	Usage   *agent.Usage   `json:"usage,omitempty"` // what the agent reported, when one ran
}

// Done notes a completed step for the checklist.
type Done struct {
	Step workflow.Event `json:"step"`
	Note string         `json:"note,omitempty"`
}

const historyMax = 20

func (r *Record) note(run Run) {
	r.Runs++
	r.addUsage(run.Usage)
	r.Last = &run
	r.History = append(r.History, run)
	if len(r.History) > historyMax {
		r.History = r.History[len(r.History)-historyMax:]
	}
}

// clone copies the record, maps and slices included.
func (r Record) clone() Record {
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

// stepKey names the current round of a step kind: "plan/2".
func (r *Record) stepKey(kind string) string {
	return fmt.Sprintf("%s/%d", kind, r.Rounds[kind])
}

// doneRound counts a completed step of kind.
func (r *Record) doneRound(kind string) {
	if r.Rounds == nil {
		r.Rounds = map[string]int{}
	}
	r.Rounds[kind]++
}

func (r *Record) phasesLeft() (next int, ok bool) {
	for i, p := range r.Phases {
		if p.SHA == "" {
			return i, true
		}
	}
	return 0, false
}

func (r *Record) phasesDone() int {
	n := 0
	for _, p := range r.Phases {
		if p.SHA != "" {
			n++
		}
	}
	return n
}

// ParseRecord reads the hidden block of a status comment body; ok is false when the body holds none.
func ParseRecord(body string) (Record, bool, error) {
	i := strings.Index(body, recordOpen)
	if i < 0 {
		return Record{}, false, nil
	}
	rest := body[i+len(recordOpen):]
	j := strings.Index(rest, recordClose)
	if j < 0 {
		return Record{}, false, fmt.Errorf("status comment: record block is not closed")
	}
	var r Record
	if err := json.Unmarshal([]byte(strings.TrimSpace(rest[:j])), &r); err != nil {
		return Record{}, false, fmt.Errorf("status comment: record block: %w", err)
	}
	return r, true, nil
}

func encodeRecord(r Record) string {
	r.Version = 1
	// json.Marshal escapes <, > and &, so the block can never contain "-->".
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		panic(err) // Record holds only plain data
	}
	return recordOpen + "\n" + string(b) + "\n" + recordClose
}
