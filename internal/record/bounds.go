package record

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/agent"
)

// Everything ralph writes to GitHub stays within GitHub's limits by construction: a body GitHub refuses is a
// record ralph cannot write (a failure never counted, a budget never charged), so no text of others, and no
// text the agent shaped, may grow what ralph writes without bound.
const (
	// MaxBody is GitHub's limit on the body of an issue comment, a pull request or a review reply, in
	// characters.
	MaxBody = 65536
	// maxRecordLine bounds a one-line text of the record that may quote others: a person's reason, why a
	// step failed, a run's message.
	maxRecordLine = 1000
	// maxRecordNote bounds a completed step's note.
	maxRecordNote = 300
	// maxVerdict bounds a document's verdict as the record keeps it.
	maxVerdict = 100
	// MaxStepsKept bounds the completed steps the record lists: the first of each kind (the checklist
	// reads them) and the latest.
	MaxStepsKept = 60
	// MaxPhaseTexts bounds the texts of the phases still to do, together (a fix round's task).
	MaxPhaseTexts = 12000
	// MaxHost bounds a refused host as the record keeps it; MaxThreadAnswer the agent's answer for a
	// review thread it did not change.
	MaxHost         = 100
	MaxThreadAnswer = 100
	// MaxPhasesKept bounds the phases of one issue (the plan's and every fix round's): the record lists
	// each, and a fix round beyond it goes to a person.
	MaxPhasesKept = 60
	// MaxChildrenKept bounds the sub-issues of one split: the record lists each, and their dependencies.
	MaxChildrenKept = 30
	// maxRequiredKept bounds the required checks the record lists, maxCheckName a check's name as kept.
	maxRequiredKept = 20
	maxCheckName    = 100
	// MaxModel bounds a model's name as a usage report gave it.
	MaxModel = 100
	// BodyRoom is what a body keeps free for the marker ralph seals it with and the note of a cut.
	BodyRoom = 400
)

// Chars counts a body as GitHub does: in characters.
func Chars(s string) int { return utf8.RuneCountInString(s) }

// cost is the most characters one character of others' text takes where ralph writes it: in the
// record's JSON ("<" is "\u003c") or rendered inert (a control or format character is shown by name).
func cost(r rune) int {
	switch {
	case r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
		return 6
	case r == '"' || r == '\\':
		return 2
	case r < 0x20 || r == 0x7f || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !unicode.IsPrint(r) && r >= 0x80:
		return 10
	}
	return 1
}

// Cut is s cut so that it takes at most n characters however it is written (see cost), saying how
// many characters more there were.
func Cut(s string, n int) string {
	total := 0
	for _, r := range s {
		total += cost(r)
	}
	if total <= n {
		return s
	}
	note := fmt.Sprintf(" … (cut: %d characters more)", Chars(s))
	keep := max(n-Chars(note), 0)
	i, k := 0, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if k+cost(r) > keep {
			break
		}
		k += cost(r)
		i += size
	}
	return s[:i] + fmt.Sprintf(" … (cut: %d characters more)", Chars(s[i:]))
}

// bounded is rec with every text within its bound: what the status comment holds of others is one-line
// texts of bounded length, and the task of a phase still to do; a done phase's text is gone (its commit
// holds the work).
func (r Record) bounded() Record {
	r = r.Clone()
	r.Reason = Cut(r.Reason, maxRecordLine)
	r.Repair = Cut(r.Repair, maxRecordLine)
	r.Feedback = Cut(r.Feedback, maxRecordLine)
	left := MaxPhaseTexts
	for i := range r.Phases {
		p := &r.Phases[i]
		p.Title = Cut(p.Title, MaxPhaseTitle)
		if p.SHA != "" {
			p.Text = ""
			continue
		}
		p.Text = Cut(p.Text, max(left, 0))
		left -= Chars(p.Text)
	}
	for k, a := range r.Artifacts {
		a.Verdict = Cut(a.Verdict, maxVerdict)
		r.Artifacts[k] = a
	}
	for i := range r.History {
		r.History[i].Message = Cut(r.History[i].Message, maxRecordLine)
		boundUsage(r.History[i].Usage)
	}
	if r.Last != nil {
		r.Last.Message = Cut(r.Last.Message, maxRecordLine)
		boundUsage(r.Last.Usage)
	}
	boundUsage(r.Usage)
	for i := range r.Refused {
		r.Refused[i] = Cut(r.Refused[i], MaxHost)
	}
	for i := range r.History {
		for j := range r.History[i].Refused {
			r.History[i].Refused[j] = Cut(r.History[i].Refused[j], MaxHost)
		}
	}
	if r.Last != nil {
		for j := range r.Last.Refused {
			r.Last.Refused[j] = Cut(r.Last.Refused[j], MaxHost)
		}
	}
	if len(r.Required) > maxRequiredKept {
		r.Required = r.Required[:maxRequiredKept]
	}
	kept := r.Required[:0]
	for _, c := range r.Required {
		if c.State == "passing" || c.State == "failing" || c.State == "pending" || c.State == "missing" {
			kept = append(kept, RequiredCheck{Name: Cut(c.Name, maxCheckName), State: c.State})
		}
	}
	r.Required = kept
	r.RequiredOn = Cut(r.RequiredOn, 40)
	if f := r.Fix; f != nil {
		f.By = Cut(f.By, MaxModel)
		for k, why := range f.Unchanged {
			f.Unchanged[k] = Cut(why, MaxThreadAnswer)
		}
	}
	if s := r.Split; s != nil {
		s.ApprovedBy = Cut(s.ApprovedBy, MaxModel)
	}
	for i := range r.Steps {
		r.Steps[i].Note = Cut(r.Steps[i].Note, maxRecordNote)
	}
	if len(r.Steps) > MaxStepsKept {
		r.Steps = keepSteps(r.Steps)
	}
	return r
}

func boundUsage(u *agent.Usage) {
	if u != nil {
		u.Model = Cut(u.Model, MaxModel)
		u.Budget = Cut(u.Budget, MaxModel)
	}
}

// keepSteps keeps the first completed step of each kind, which the checklist reads, and the latest.
func keepSteps(all []Done) []Done {
	seen := map[string]bool{}
	first := map[int]bool{}
	for i, d := range all {
		if !seen[string(d.Step)] {
			seen[string(d.Step)], first[i] = true, true
		}
	}
	var out []Done
	latest := MaxStepsKept - len(first)
	for i, d := range all {
		if first[i] || i >= len(all)-latest {
			out = append(out, d)
		}
	}
	return out
}

// Fit renders the status comment of rec with render, within MaxBody: rec bounded, and, should that still be
// too long (phases of long titles quoting many characters JSON escapes), with less of its history and
// shorter titles of done phases, down to a form whose size the bounds fix. The record it holds is the one
// returned. render is the engine's: it reads the workflow's table, which the engine owns.
func Fit(rec Record, render func(Record) string) (string, Record) {
	rec = rec.bounded()
	body := render(rec)
	for level := 1; Chars(body) > MaxBody-BodyRoom && level <= 3; level++ {
		rec = compacted(rec, level)
		body = render(rec)
	}
	return body, rec
}

// compacted is rec with less of what it keeps for people to read, not for ralph to go on: level 1 keeps the
// last run alone; level 2 cuts the titles of done phases and the notes; level 3 drops the titles of done
// phases and the refused hosts (the run's log lists them).
func compacted(rec Record, level int) Record {
	rec = rec.Clone()
	if len(rec.History) > 1 {
		rec.History = rec.History[len(rec.History)-1:]
	}
	if level >= 2 {
		for i := range rec.Phases {
			if rec.Phases[i].SHA != "" {
				rec.Phases[i].Title = Cut(rec.Phases[i].Title, 40)
			}
		}
		for i := range rec.Steps {
			rec.Steps[i].Note = ""
		}
		if rec.Last != nil {
			rec.Last.Message = Cut(rec.Last.Message, 200)
		}
	}
	if level >= 3 {
		// The commits hold the titles of done phases; a phase to do keeps a short one, its commit's subject.
		for i := range rec.Phases {
			if rec.Phases[i].SHA != "" {
				rec.Phases[i].Title = ""
			} else {
				rec.Phases[i].Title = Cut(rec.Phases[i].Title, 40)
			}
		}
		rec.Refused = nil
		if rec.Last != nil {
			rec.Last.Refused = nil
		}
	}
	return rec
}

// FitBody is a body of ralph's cut to what GitHub takes, room kept for the marker it is sealed with.
func FitBody(s string) string {
	return Cut(s, MaxBody-BodyRoom)
}
