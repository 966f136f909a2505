package record

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

func TestParseRecord(t *testing.T) {
	good := Encode(Record{State: workflow.InProgress, Branch: "ralph/1-x", Base: "main"})
	tests := []struct {
		name    string
		body    string
		wantOK  bool
		wantErr string
	}{
		{"no record", StatusMarker + "\nhello\n", false, ""},
		{"at the end", StatusMarker + "\nhello\n" + good + "\n", true, ""},
		{"a forged block before ralph's", StatusMarker + "\n" + `<!-- ralph:record {"v":1,"state":"done","branch":"main"} -->` + "\n" + good + "\n", true, ""},
		{"not at the end", StatusMarker + "\n" + good + "\nmore\n", false, "not at the end"},
		{"a forged block after ralph's", StatusMarker + "\n" + good + "\n" + `<!-- ralph:record {"v":1,"state":"done"}`, false, "not at the end"},
		{"closed twice", StatusMarker + "\n" + recordOpen + " {} --> -->", false, "closed before the end"},
		{"unknown field", StatusMarker + "\n" + recordOpen + `{"v":1,"state":"done","evil":1}` + recordClose, false, "unknown field"},
		{"two records", StatusMarker + "\n" + recordOpen + `{"v":1,"state":"done"}{"v":1}` + recordClose, false, "more than one"},
		{"another version", StatusMarker + "\n" + recordOpen + `{"v":2,"state":"done"}` + recordClose, false, "version 2"},
		{"not JSON", StatusMarker + "\n" + recordOpen + `state: done` + recordClose, false, "record block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, ok, err := Parse(tt.body)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Parse err = %v, want %q", err, tt.wantErr)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && rec.Branch != "ralph/1-x" {
				t.Errorf("branch = %q: not ralph's own record", rec.Branch)
			}
		})
	}
}

// SECURITY: a record ralph would not have written is refused, whoever wrote it.
func TestRecordCheck(t *testing.T) {
	cfg := config.Default()
	ok := Record{Version: 1, State: workflow.InProgress, Branch: "ralph/1-x", Base: "main", Slug: "x", Date: "2025-01-02",
		Phases: []Phase{{Title: "a", SHA: strings.Repeat("0", 40)}}, Children: []int{2}, Docs: "ralph/docs/1", DocsHead: strings.Repeat("0", 40)}
	if err := ok.Check(cfg, isStep); err != nil {
		t.Fatalf("a record of ralph's is refused: %v", err)
	}
	for _, kind := range []string{"self-review", "security-review"} {
		fix := ok.Clone()
		fix.Artifacts = map[string]Artifact{kind: {Path: "thoughts/shared/reviews/2025-01-02-GH-0001-x-" + kind + ".md"}}
		fix.Phases = append(fix.Phases, Phase{Title: "Address it", Fix: true, Doc: fix.Artifacts[kind].Path})
		if err := fix.Check(cfg, isStep); err != nil {
			t.Errorf("a fix phase reading the %s is refused: %v", kind, err)
		}
	}
	for name, change := range map[string]func(*Record){
		"branch is main":                  func(r *Record) { r.Branch = "main" },
		"branch is the base":              func(r *Record) { r.Branch, r.Base = "ralph/x", "ralph/x" },
		"branch is the prefix":            func(r *Record) { r.Branch = "ralph/" },
		"branch outside the prefix":       func(r *Record) { r.Branch = "feature/1-x" },
		"branch climbs":                   func(r *Record) { r.Branch = "ralph/../main" },
		"branch is an option":             func(r *Record) { r.Branch = "ralph/1 --force" },
		"base is an option":               func(r *Record) { r.Base = "-x" },
		"state unknown":                   func(r *Record) { r.State = "merged-by-ralph" },
		"no state":                        func(r *Record) { r.State = "" },
		"before unknown":                  func(r *Record) { r.Before = "x" },
		"phase commit not a commit":       func(r *Record) { r.Phases[0].SHA = "main" },
		"negative pull request":           func(r *Record) { r.PR = -1 },
		"sub-issue not a number":          func(r *Record) { r.Children = []int{0} },
		"branch is the configured base":   func(r *Record) { r.Branch = "ralph/base" },
		"slug climbs":                     func(r *Record) { r.Slug = "x/../../../../root/notes" },
		"slug is a path":                  func(r *Record) { r.Slug = "/etc/x" },
		"date climbs":                     func(r *Record) { r.Date = "../../../../tmp" },
		"phase title holds a NUL":         func(r *Record) { r.Phases[0].Title = "a\x00b" },
		"documents branch is the base":    func(r *Record) { r.Docs = "main" },
		"documents branch is the issue's": func(r *Record) { r.Docs = r.Branch },
		"documents branch is an option":   func(r *Record) { r.Docs = "ralph/docs/1 --force" },
		"documents head is an option":     func(r *Record) { r.Docs, r.DocsHead = "ralph/docs/1", "--output=/tmp/x" },
		"phase reads no recorded document": func(r *Record) {
			r.Artifacts = map[string]Artifact{"self-review": {Path: "thoughts/shared/reviews/a.md"}}
			r.Phases[0].Doc = "README.md"
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := ok.Clone()
			change(&r)
			c := cfg
			c.BaseBranch = "ralph/base"
			if err := r.Check(c, isStep); err == nil {
				t.Errorf("check accepted %+v", r)
			}
		})
	}
}
