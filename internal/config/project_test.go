package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProject(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want *Project
	}{
		{"left out", "review: auto\n", nil},
		{"empty", "project:\n", nil},
		{"default field", "project:\n  owner: octo\n  number: 3\n", &Project{Owner: "octo", Number: 3, Field: "Workflow State"}},
		{"every key", "project: {owner: mona-lisa, number: 12, field: Ralph}\n", &Project{Owner: "mona-lisa", Number: 12, Field: "Ralph"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(file, []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.Project); diff != "" {
				t.Errorf("Project (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProjectBad(t *testing.T) {
	tests := []struct {
		name         string
		yaml         string
		line, column int
		key          string
		msg          string
	}{
		{"not a mapping", "project: octo/3\n", 1, 10, "project", "must be a mapping with the keys owner, number, field"},
		{"unknown key", "project:\n  owner: octo\n  numbr: 3\n", 3, 3, "project.numbr", `did you mean "number"?`},
		{"owner missing", "project:\n  number: 3\n", 2, 3, "project.owner", "must be set"},
		{"number missing", "project:\n  owner: octo\n", 2, 3, "project.number", "must be set"},
		{"number zero", "project:\n  owner: octo\n  number: 0\n", 3, 11, "project.number", "must be at least 1"},
		{"number not a number", "project:\n  owner: octo\n  number: three\n", 3, 11, "project.number", "must be a whole number"},
		{"owner with a slash", "project:\n  owner: octo/demo\n  number: 1\n", 2, 10, "project.owner", "must be the login"},
		{"owner a list", "project:\n  owner: [a]\n  number: 1\n", 2, 10, "project.owner", "must be a string"},
		{"field empty", "project:\n  owner: octo\n  number: 1\n  field: \"\"\n", 4, 10, "project.field", "must name a field"},
		{"duplicate key", "project:\n  owner: octo\n  owner: mona\n  number: 1\n", 3, 3, "project.owner", "duplicate key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(file, []byte(tt.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want an *Error", c, err)
			}
			got := Error{File: e.File, Line: e.Line, Column: e.Column, Key: e.Key}
			want := Error{File: file, Line: tt.line, Column: tt.column, Key: tt.key}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %q: place (-want +got):\n%s", err, diff)
			}
			if !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error message %q does not contain %q", e.Msg, tt.msg)
			}
		})
	}
}

// A board's block parses, its field defaulted.
func TestProjectBlock(t *testing.T) {
	c, err := Parse(DefaultPath, []byte("project:\n  owner: octo\n  number: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Project{Owner: "octo", Number: 3, Field: DefaultProjectField}, c.Project); diff != "" {
		t.Errorf("project (-want +got):\n%s", diff)
	}
}
