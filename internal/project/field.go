package project

import (
	"context"
	"fmt"
	"strings"

	"github.com/shurcooL/githubv4"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Option is one option of the state field as EnsureField creates it.
type Option struct {
	Name        string
	Color       githubv4.ProjectV2SingleSelectFieldOptionColor
	Description string
}

// StateOptions are the field's 11 options in workflow order, coloured by kind like ralph's labels: waiting blue,
// lock yellow, gate orange, Done green, Human Needed red, Canceled gray.
func StateOptions() []Option {
	desc := map[workflow.State]string{
		workflow.Backlog:            "Waiting for triage",
		workflow.ResearchNeeded:     "Waiting for the research step",
		workflow.ResearchInProgress: "A run is researching",
		workflow.ReadyForPlan:       "Waiting for the plan step",
		workflow.PlanInProgress:     "A run is planning",
		workflow.PlanInReview:       "The plan is being reviewed",
		workflow.InProgress:         "Implementing, one phase per run",
		workflow.InReview:           "The pull request is open for review",
		workflow.Done:               "Merged",
		workflow.HumanNeeded:        "Stopped; a person is needed",
		workflow.Canceled:           "Triage decided not to do it",
	}
	color := map[workflow.Kind]githubv4.ProjectV2SingleSelectFieldOptionColor{
		workflow.Waiting:  githubv4.ProjectV2SingleSelectFieldOptionColorBlue,
		workflow.Lock:     githubv4.ProjectV2SingleSelectFieldOptionColorYellow,
		workflow.Gate:     githubv4.ProjectV2SingleSelectFieldOptionColorOrange,
		workflow.Terminal: githubv4.ProjectV2SingleSelectFieldOptionColorGreen,
	}
	var out []Option
	for _, s := range workflow.States() {
		c := color[s.Kind()]
		switch s {
		case workflow.HumanNeeded:
			c = githubv4.ProjectV2SingleSelectFieldOptionColorRed
		case workflow.Canceled:
			c = githubv4.ProjectV2SingleSelectFieldOptionColorGray
		}
		out = append(out, Option{Name: s.Title(), Color: c, Description: desc[s]})
	}
	return out
}

// MissingOptionsError is a state field that exists but lacks some of ralph's options.
//
// ralph does not add them: GitHub's API (updateProjectV2Field) can only replace a field's whole option list,
// and replaced options are new options, so every item would lose its value in the field. A person adds the
// missing options in the project's field settings, which keeps the others.
type MissingOptionsError struct {
	Board   string
	Missing []string
}

func (e *MissingOptionsError) Error() string {
	return fmt.Sprintf("%s lacks the options %s: add them in the project's field settings (ralph does not: GitHub's API "+
		"can only replace the whole option list, which would clear the field on every item)", e.Board, strings.Join(e.Missing, ", "))
}

// EnsureField creates the board's single-select field with the 11 options when the project has no field of
// that name, and reports whether it did. A field that exists is left alone; when it lacks options the error
// is a *MissingOptionsError, and when it is not a single-select field an error says so.
func (b *Board) EnsureField(ctx context.Context) (created bool, err error) {
	var q struct {
		RepositoryOwner *projectOwner `graphql:"repositoryOwner(login: $owner)"`
	}
	err = b.gql.Query(ctx, &q, map[string]any{
		"owner": githubv4.String(b.owner), "number": githubv4.Int(b.number), "field": githubv4.String(b.field),
	})
	if err := b.found(q.RepositoryOwner, err); err != nil {
		return false, err
	}
	if err != nil {
		return false, b.fail("reading", err)
	}
	p := q.RepositoryOwner.Owner.ProjectV2
	if f := p.Field; f != nil {
		if f.SingleSelect.ID == "" {
			return false, fmt.Errorf("%s: the field %q is a %s, not a single-select field: rename it, or set project.field in the config to another name",
				b.target, b.field, f.Typename)
		}
		have := map[string]bool{}
		for _, o := range f.SingleSelect.Options {
			have[o.Name] = true
		}
		var missing []string
		for _, o := range StateOptions() {
			if !have[o.Name] {
				missing = append(missing, o.Name)
			}
		}
		b.mu.Lock()
		b.remember(p.ID, f)
		b.mu.Unlock()
		if len(missing) > 0 {
			return false, &MissingOptionsError{Board: b.String(), Missing: missing}
		}
		return false, nil
	}

	var opts []githubv4.ProjectV2SingleSelectFieldOptionInput
	for _, o := range StateOptions() {
		opts = append(opts, githubv4.ProjectV2SingleSelectFieldOptionInput{
			Name: githubv4.String(o.Name), Color: o.Color, Description: githubv4.String(o.Description)})
	}
	var m struct {
		CreateProjectV2Field struct {
			ProjectV2Field singleSelect `graphql:"projectV2Field"`
		} `graphql:"createProjectV2Field(input: $input)"`
	}
	in := githubv4.CreateProjectV2FieldInput{
		ProjectID: githubv4.ID(p.ID), DataType: githubv4.ProjectV2CustomFieldTypeSingleSelect,
		Name: githubv4.String(b.field), SingleSelectOptions: &opts,
	}
	if err := b.gql.Mutate(ctx, &m, in, nil); err != nil {
		return false, b.fail(fmt.Sprintf("creating the field %q in", b.field), err)
	}
	b.mu.Lock()
	b.remember(p.ID, &m.CreateProjectV2Field.ProjectV2Field)
	b.mu.Unlock()
	return true, nil
}
