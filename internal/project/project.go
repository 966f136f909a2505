// Package project mirrors ralph's workflow state on a GitHub Projects (V2) board: a single-select field
// (default "Workflow State") whose option, for each issue, is the title of the issue's state.
//
// It speaks GraphQL through githubv4. Projects are out of reach of an Actions GITHUB_TOKEN, so a Board is
// made with its own token (a classic token with the project scope, or a fine-grained token or GitHub App
// with the Projects permission).
package project

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/shurcooL/githubv4"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// DefaultField is the field a board's state lives in when the config names none.
const DefaultField = "Workflow State"

// ErrNoAccess is returned (wrapped) when GitHub says the token cannot reach projects: a classic token
// without the project scope, or a token (such as the Actions GITHUB_TOKEN) without the Projects permission.
var ErrNoAccess = errors.New("the token cannot reach projects")

// Options configure a Board.
type Options struct {
	GraphQL string // the GraphQL endpoint, e.g. https://api.github.com/graphql
	Token   string
	// Transport is the base transport; nil: ghapi.DefaultTransport (system CAs and SSL_CERT_FILE).
	Transport http.RoundTripper
	Owner     string // the user or organization that owns the project
	Number    int    // the project's number, as in its URL
	Field     string // the single-select field; "" means DefaultField
}

// Board is one project's state field. Its methods are safe for concurrent use; it caches the ids of the
// project, the field, its options and the issues' items, so that a state change usually costs one request.
type Board struct {
	gql                  *githubv4.Client
	owner, field, target string
	number               int

	mu      sync.Mutex
	project string            // project node id; "" until loaded
	fieldID string            // "" until loaded, or when the field is missing
	options map[string]string // option name → id
	items   map[string]string // issue node id → item id
}

// New makes a Board. It sends nothing until it is used.
func New(opts Options) (*Board, error) {
	if opts.Owner == "" || opts.Number < 1 {
		return nil, errors.New("project: an owner and a project number of at least 1 are required")
	}
	if opts.Token == "" {
		return nil, errors.New("project: a token is required")
	}
	base := opts.Transport
	if base == nil {
		var err error
		if base, err = ghapi.DefaultTransport(nil); err != nil {
			return nil, err
		}
	}
	field := opts.Field
	if field == "" {
		field = DefaultField
	}
	hc := &http.Client{Transport: &tokenTransport{base: base, token: opts.Token}}
	return &Board{
		gql:    githubv4.NewEnterpriseClient(opts.GraphQL, hc),
		owner:  opts.Owner,
		number: opts.Number,
		field:  field,
		target: fmt.Sprintf("project %d of %s", opts.Number, opts.Owner),
		items:  map[string]string{},
	}, nil
}

// tokenTransport sends the board's token; it is the only credential the board's client carries.
type tokenTransport struct {
	base  http.RoundTripper
	token string
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "bearer "+t.token)
	return t.base.RoundTrip(r)
}

// Field is the name of the board's state field.
func (b *Board) Field() string { return b.field }

// String names the board in messages: `field "Workflow State" of project 3 of octo`.
func (b *Board) String() string { return fmt.Sprintf("field %q of %s", b.field, b.target) }

// singleSelect is a single-select field as the queries read it.
type singleSelect struct {
	Typename     string `graphql:"__typename"`
	SingleSelect struct {
		ID      string
		Options []option
	} `graphql:"... on ProjectV2SingleSelectField"`
}

type option struct {
	ID, Name, Color, Description string
}

// projectOwner is repositoryOwner(login:) → projectV2(number:), which finds a user's or an
// organization's project with one query.
type projectOwner struct {
	Owner struct {
		ProjectV2 *struct {
			ID    string
			Field *singleSelect `graphql:"field(name: $field)"`
		} `graphql:"projectV2(number: $number)"`
	} `graphql:"... on ProjectV2Owner"`
}

// SetState sets the issue's option in the board's field to the title of state ("Research Needed", …),
// adding the issue to the board first when it is not on it.
//
// Cost: the first call of a Board reads the project, the field and the issue's items in one query; then one
// mutation when the issue is on the board, two when it must be added. Later calls for the same issue cost
// one mutation; for another issue, two (adding an item that is already on the board returns it).
func (b *Board) SetState(ctx context.Context, issueNodeID string, state workflow.State) error {
	if issueNodeID == "" {
		return errors.New("project: the issue's node id is empty")
	}
	err := b.setState(ctx, issueNodeID, state, true)
	var stale *staleError
	if errors.As(err, &stale) {
		// A cached id went stale (the item was removed from the board, the field or an option was
		// changed by a person): forget everything and try once more from GitHub's current answer.
		b.forget()
		err = b.setState(ctx, issueNodeID, state, false)
		if errors.As(err, &stale) {
			err = stale.err
		}
	}
	return err
}

// staleError is a mutation that failed while it used cached ids.
type staleError struct{ err error }

func (e *staleError) Error() string { return e.err.Error() }
func (e *staleError) Unwrap() error { return e.err }

func (b *Board) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.project, b.fieldID, b.options = "", "", nil
	b.items = map[string]string{}
}

func (b *Board) setState(ctx context.Context, issue string, state workflow.State, cached bool) error {
	b.mu.Lock()
	loaded := b.project != ""
	b.mu.Unlock()
	if !loaded {
		cached = false
		if err := b.load(ctx, issue); err != nil {
			return err
		}
	}
	b.mu.Lock()
	project, fieldID, optionID, item := b.project, b.fieldID, b.options[state.Title()], b.items[issue]
	b.mu.Unlock()
	if fieldID == "" {
		return fmt.Errorf("%s has no single-select field %q: run `gh ralph init --project` to create it", b.target, b.field)
	}
	if optionID == "" {
		return fmt.Errorf("%s has no option %q: add it in the project's settings (or delete the field and run `gh ralph init --project`)", b, state.Title())
	}
	wrap := func(err error) error {
		if cached {
			return &staleError{err}
		}
		return err
	}
	if item == "" {
		var m struct {
			AddProjectV2ItemByID struct {
				Item struct{ ID string }
			} `graphql:"addProjectV2ItemById(input: $input)"`
		}
		in := githubv4.AddProjectV2ItemByIdInput{ProjectID: githubv4.ID(project), ContentID: githubv4.ID(issue)}
		if err := b.gql.Mutate(ctx, &m, in, nil); err != nil {
			return wrap(b.fail("adding the issue to", err))
		}
		item = m.AddProjectV2ItemByID.Item.ID
		b.mu.Lock()
		b.items[issue] = item
		b.mu.Unlock()
		cached = false
	}
	var m struct {
		UpdateProjectV2ItemFieldValue struct {
			ProjectV2Item struct{ ID string } `graphql:"projectV2Item"`
		} `graphql:"updateProjectV2ItemFieldValue(input: $input)"`
	}
	opt := githubv4.String(optionID)
	in := githubv4.UpdateProjectV2ItemFieldValueInput{
		ProjectID: githubv4.ID(project), ItemID: githubv4.ID(item), FieldID: githubv4.ID(fieldID),
		Value: githubv4.ProjectV2FieldValue{SingleSelectOptionID: &opt},
	}
	if err := b.gql.Mutate(ctx, &m, in, nil); err != nil {
		return wrap(b.fail(fmt.Sprintf("setting %q on", state.Title()), err))
	}
	return nil
}

// load reads the project, its field and the issue's item (if it is on the board) in one query.
func (b *Board) load(ctx context.Context, issue string) error {
	var q struct {
		RepositoryOwner *projectOwner `graphql:"repositoryOwner(login: $owner)"`
		Node            *struct {
			Issue struct {
				ProjectItems struct {
					Nodes []struct {
						ID      string
						Project struct{ ID string }
					}
				} `graphql:"projectItems(first: 100)"`
			} `graphql:"... on Issue"`
		} `graphql:"node(id: $issue)"`
	}
	err := b.gql.Query(ctx, &q, map[string]any{
		"owner": githubv4.String(b.owner), "number": githubv4.Int(b.number), "field": githubv4.String(b.field),
		"issue": githubv4.ID(issue),
	})
	if err := b.found(q.RepositoryOwner, err); err != nil {
		return err
	}
	if err != nil {
		return b.fail("reading", err)
	}
	if q.Node == nil {
		return fmt.Errorf("reading %s: issue %s not found", b.target, issue)
	}
	p := q.RepositoryOwner.Owner.ProjectV2
	b.mu.Lock()
	defer b.mu.Unlock()
	b.remember(p.ID, p.Field)
	for _, it := range q.Node.Issue.ProjectItems.Nodes {
		if it.Project.ID == p.ID {
			b.items[issue] = it.ID
		}
	}
	return nil
}

// remember caches the project's and the field's ids; b.mu must be held.
func (b *Board) remember(project string, f *singleSelect) {
	b.project, b.fieldID, b.options = project, "", map[string]string{}
	if f != nil && f.SingleSelect.ID != "" {
		b.fieldID = f.SingleSelect.ID
		for _, o := range f.SingleSelect.Options {
			b.options[o.Name] = o.ID
		}
	}
}

// found turns a missing owner or project into an error that says what to check.
func (b *Board) found(owner *projectOwner, err error) error {
	if noAccess(err) {
		return b.fail("reading", err)
	}
	if owner == nil || owner.Owner.ProjectV2 == nil {
		why := ""
		if err != nil {
			why = ": " + err.Error()
		}
		return fmt.Errorf("%s not found%s; check project.owner and project.number in the config, and that the token "+
			"can reach it (a classic token needs the project scope, a fine-grained token or app the Projects permission)", b.target, why)
	}
	return nil
}

// fail wraps a GraphQL error, marking a scope or permission problem with ErrNoAccess.
func (b *Board) fail(doing string, err error) error {
	if noAccess(err) {
		return fmt.Errorf("%s %s: %w: %v", doing, b.target, ErrNoAccess, err)
	}
	return fmt.Errorf("%s %s: %w", doing, b.target, err)
}

// noAccess recognizes GitHub's answers to a token that may not use projects. githubv4 keeps only the
// messages of GraphQL errors, not their types, so the words are matched.
func noAccess(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "required scopes") || strings.Contains(msg, "Resource not accessible") ||
		strings.Contains(msg, "401 Unauthorized")
}
