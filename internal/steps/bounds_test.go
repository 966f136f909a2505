package steps

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// fillMax sets every field of v that ralph does not make itself to its most: every string long, of c
// (the character that grows most where it is rendered), every list and map at the most the record keeps
// (n elements).
func fillMax(v reflect.Value, c string, n int) {
	fill(v, c, strings.Repeat(c, 30000), n)
}

func fill(v reflect.Value, c, long string, n int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), c, long, n)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), c, long, n)
		}
	case reflect.String:
		v.SetString(long)
	case reflect.Int, reflect.Int64:
		v.SetInt(1 << 40)
	case reflect.Float64:
		v.SetFloat(123456789.123456)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), c, long, n)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range n {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(c + strings.Repeat("k", i))
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, c, long, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// TestStatusFitsAtEveryMaximum: a record with every field at its maximum, of every kind of character,
// renders a status comment GitHub takes (at most record.MaxBody characters), whose record reads back.
func TestStatusFitsAtEveryMaximum(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"a", "<", "&", "\u0007", "\U0001F600", "\u202e", "\u2028", "@", "`", "\\", "\"", "\xff"} {
		var rec Record
		fillMax(reflect.ValueOf(&rec), c, record.MaxStepsKept*4)
		// What ralph makes itself, and checks when it reads a record: states, names of its own, links.
		rec.State, rec.Before = workflow.InReview, workflow.InProgress
		rec.FailedStep = workflow.Implement
		rec.Branch, rec.Base, rec.Slug, rec.Date = "ralph/1-"+strings.Repeat("s", 200), "main", strings.Repeat("s", 200), "2026-11-28"
		rec.Head, rec.CIDigest = strings.Repeat("a", 40), strings.Repeat("a", 64)
		rec.Docs, rec.DocsHead = "ralph/docs/"+strings.Repeat("9", 19), strings.Repeat("a", 40)
		rec.PRURL = "https://github.com/octo/widgets/pull/1"
		rec.Phases = rec.Phases[:record.MaxPhasesKept]
		rec.Children = rec.Children[:record.MaxChildrenKept]
		rec.Refused = rec.Refused[:refusedMax]
		rec.History = rec.History[:record.HistoryMax]
		rec.ChildDeps, rec.ChildStates = map[string][]int{}, map[string]string{}
		for i := range record.MaxChildrenKept {
			rec.ChildStates[strings.Repeat("9", 6)+string(rune('a'+i%26))] = string(workflow.Done)
			deps := make([]int, i) // a part is blocked only by earlier parts
			for j := range deps {
				deps[j] = 1 << 30
			}
			rec.ChildDeps[strings.Repeat("9", 6)+string(rune('a'+i%26))+strings.Repeat("z", i/26)] = deps
		}
		rec.Attempt.Step = workflow.Implement
		rec.Waiting.Step = workflow.Implement // a step's name: check refuses any other
		rec.Artifacts = map[string]Artifact{}
		for _, d := range Workflow().Documents() {
			rec.Artifacts[d.Kind] = Artifact{Verdict: strings.Repeat(c, 30000)}
		}
		rec.Rounds = map[string]int{}
		steps := workflowSteps()
		for _, st := range steps {
			rec.Rounds[string(st.Name)] = 1 << 40
		}
		for i := range rec.Steps {
			rec.Steps[i].Step = steps[i%len(steps)].Name
		}
		rec.Fix.Cause, rec.Fix.Threads = FixReview, rec.Fix.Threads[:maxFixThreads]
		rec.Fix.Unchanged = map[string]string{}
		for i := range maxFixThreads {
			rec.Fix.Unchanged[strconv.Itoa(i+1)] = strings.Repeat(c, 30000)
		}
		rec.Split.Marker, rec.Split.Digest, rec.Split.ApprovedBy = "triage 1", strings.Repeat("a", 64), strings.Repeat("a", 39)
		for i := range rec.Phases {
			p := &rec.Phases[i]
			p.SHA, p.Doc = strings.Repeat("a", 40), ""
			if i == len(rec.Phases)-1 {
				p.SHA = ""
			}
		}
		for k, a := range rec.Artifacts {
			a.Path, a.URL, a.Comment = "docs/"+strings.Repeat("p", 200), "https://github.com/octo/widgets/blob/"+strings.Repeat("b", 200), "https://github.com/octo/widgets/issues/1#issuecomment-1"
			rec.Artifacts[k] = a
		}
		for i := range rec.History {
			h := &rec.History[i]
			h.URL = "https://github.com/octo/widgets/actions/runs/1"
			h.Step, h.From, h.To, h.Outcome = workflow.Implement, workflow.InProgress, workflow.HumanNeeded, "budget reached"
			h.Refused = h.Refused[:refusedMax]
			for j := range h.Refused {
				h.Refused[j] = strings.Repeat(c, 253) + ":65535"
			}
		}
		for i := range rec.Refused {
			rec.Refused[i] = strings.Repeat(c, 253) + ":65535"
		}
		rec.Last = &rec.History[len(rec.History)-1]
		cfg := config.Default()
		links := Links{Branch: "https://github.com/octo/widgets/tree/" + rec.Branch, Run: "https://github.com/octo/widgets/actions/runs/1"}
		body, kept := record.Fit(rec, func(r Record) string { return Workflow().RenderStatus(1, r, cfg, links, Facts{}) })
		if got := record.Chars(body); got > record.MaxBody-record.BodyRoom {
			t.Errorf("%q: the status comment is %d characters, more than %d", c, got, record.MaxBody-record.BodyRoom)
			kv := reflect.ValueOf(kept)
			for i := range kv.NumField() {
				b, _ := json.Marshal(kv.Field(i).Interface())
				if len(b) > 2000 {
					t.Logf("%s: %d", kv.Type().Field(i).Name, len(b))
				}
			}
		}
		back, ok, err := record.Parse(body)
		if err != nil || !ok {
			t.Fatalf("%q: the record does not read back: %v", c, err)
		}
		if len(back.Phases) != len(kept.Phases) || back.Phases[len(back.Phases)-1].Text == "" {
			t.Errorf("%q: the record lost its phases or the task of the phase to do", c)
		}
	}
}

// TestBodiesFit: every comment, pull request body and reply ralph composes is cut to what GitHub takes.
func TestBodiesFit(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("<\U0001F600", record.MaxBody)
	if got := record.Chars(record.Seal(huge, "<!-- ralph:notice x -->")); got > record.MaxBody {
		t.Errorf("a sealed comment is %d characters", got)
	}
	var rec Record
	fillMax(reflect.ValueOf(&rec), "<", 10)
	rec.Phases = make([]Phase, record.MaxPhasesKept)
	for i := range rec.Phases {
		rec.Phases[i].Title = strings.Repeat("<", record.MaxPhaseTitle)
	}
	if got := record.Chars(pullBody(1, huge, rec, Workflow().Documents())); got > record.MaxBody {
		t.Errorf("the pull request's body is %d characters", got)
	}
}
