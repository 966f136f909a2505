package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// enrollGitHub is what MayEnroll reads: issues by number, who labeled each, and each person's permission.
type enrollGitHub struct {
	issues map[int]ghapi.Issue
	by     map[int]string
	perm   map[string]string
}

func (g enrollGitHub) Owner() string { return "octo" }
func (g enrollGitHub) Repo() string  { return "widgets" }
func (g enrollGitHub) Issue(_ context.Context, n int) (ghapi.Issue, error) {
	is, ok := g.issues[n]
	if !ok {
		return ghapi.Issue{}, ghapi.ErrNotFound
	}
	return is, nil
}
func (g enrollGitHub) LabeledBy(_ context.Context, n int, _ string) (string, error) {
	return g.by[n], nil
}
func (g enrollGitHub) Permission(_ context.Context, login string) (string, error) {
	return g.perm[login], nil
}

// TestMayEnroll: the engine says whether a person may enroll an issue (the checks gh ralph enroll asks it
// for), and whether the issue's ralph:build counts as it is.
func TestMayEnroll(t *testing.T) {
	t.Parallel()
	labels := func(names ...string) []ghapi.Label {
		var ls []ghapi.Label
		for _, n := range names {
			ls = append(ls, ghapi.Label{Name: n})
		}
		return ls
	}
	gh := enrollGitHub{
		issues: map[int]ghapi.Issue{
			1: {Number: 1, State: "open"},
			2: {Number: 2, State: "open", PullRequest: &struct {
				URL string `json:"url"`
			}{}},
			3: {Number: 3, State: "closed"},
			4: {Number: 4, State: "open", Labels: labels(workflow.Done.Label())},
			5: {Number: 5, State: "open", Labels: labels(workflow.LabelBuild)},
			6: {Number: 6, State: "open", Labels: labels(workflow.LabelBuild)},
		},
		by:   map[int]string{5: "eve", 6: "bob"},
		perm: map[string]string{"alice": "write", "bob": "maintain", "eve": "read"},
	}
	ctx := context.Background()
	for _, c := range []struct {
		n     int
		login string
		want  engine.Enrollment
		err   string
	}{
		{1, "alice", engine.Enrollment{}, ""},
		{2, "alice", engine.Enrollment{}, "#2 is a pull request"},
		{3, "alice", engine.Enrollment{}, "#3 is closed; reopen it first"},
		{4, "alice", engine.Enrollment{}, "#4 is Done"},
		{7, "alice", engine.Enrollment{}, "issue #7 does not exist in octo/widgets"},
		{1, "eve", engine.Enrollment{}, "@eve may not enroll"},
		{5, "alice", engine.Enrollment{Labeled: true, LabeledBy: "eve"}, ""},
		{6, "alice", engine.Enrollment{Labeled: true, LabeledBy: "bob", Trusted: true}, ""},
		{5, "eve", engine.Enrollment{}, "@eve may not enroll"},
	} {
		got, err := engine.MayEnroll(ctx, gh, c.n, c.login)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) || got != c.want {
			t.Errorf("MayEnroll(#%d, %s) = %+v, %v; want %+v, %q", c.n, c.login, got, err, c.want, c.err)
		}
		var input *engine.InputError
		var refused *engine.RefusedError
		if err != nil && !errors.As(err, &input) && !errors.As(err, &refused) {
			t.Errorf("MayEnroll(#%d, %s): %v is neither an input error nor a refusal", c.n, c.login, err)
		}
	}
}
