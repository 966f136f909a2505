package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The status read model: what ralph knows of an issue, read the way a run reads it (only ralph's own status
// comment counts, and only a record that passes Record.check), for gh ralph status to print. The status
// comment is rendered from the same record and the same planner (RenderStatus).

// StatusReader is what reading an issue's status needs of GitHub; *ghapi.Client implements it.
type StatusReader interface {
	IssueWithComments(ctx context.Context, n int) (ghapi.Issue, []ghapi.Comment, error)
	Comments(ctx context.Context, n int) ([]ghapi.Comment, error)
	Permission(ctx context.Context, login string) (string, error)
	Viewer(ctx context.Context) (string, error)
	Owner() string
	Repo() string
}

// IssueView is what ralph knows of one issue.
type IssueView struct {
	Number    int
	Title     string
	URL       string
	Open      bool
	State     workflow.State // the record's; labels are a view of it
	Record    Record
	HasRecord bool
	UpdatedAt time.Time
	// Since is when the issue entered its state, as far as ralph knows.
	Since time.Time
	// Warnings are what a person should look at: comments and labels ralph does not believe.
	Warnings []string
	// Running is the state label a step puts on while it runs (Research in Progress), when the labels show
	// it over the record's state: no disagreement with the record. Whether a run holds the issue now, its
	// lock says.
	Running workflow.State
}

// PhaseProgress is how far the implementation is: Done of Total phases, Next the title of the one to do next.
type PhaseProgress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Next  string `json:"next,omitempty"`
}

// Phases is how far the implementation is.
func (v IssueView) Phases() PhaseProgress {
	p := PhaseProgress{Total: len(v.Record.Phases)}
	for _, ph := range v.Record.Phases {
		if ph.SHA != "" {
			p.Done++
		} else if p.Next == "" {
			p.Next = ph.Title
		}
	}
	return p
}

// Next says what happens next, and who does it: the planner decides, as it does for a run.
func (v IssueView) Next(cfg config.Config) string {
	return Next(v.Number, v.Record, true, Facts{Closed: !v.Open}, cfg).Describe()
}

// ReadView reads issue n: one request for the issue with its comments, and the permission checks that say
// whose status comment counts.
func ReadView(ctx context.Context, gh StatusReader, cfg config.Config, n int) (*IssueView, error) {
	is, comments, err := gh.IssueWithComments(ctx, n)
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil, inputErrorf("issue #%d does not exist in %s/%s", n, gh.Owner(), gh.Repo())
	}
	if err != nil {
		return nil, err
	}
	if is.IsPull() {
		return nil, inputErrorf("#%d is a pull request; ralph works on issues", n)
	}
	v := &IssueView{Number: n, Title: is.Title, URL: is.HTMLURL, Open: is.State == "open", UpdatedAt: is.UpdatedAt, Since: is.UpdatedAt}
	var warns []string
	v.Record, v.HasRecord, warns, err = FindRecord(ctx, gh, cfg, n, comments)
	if err != nil {
		return nil, err
	}
	v.Warnings = append(v.Warnings, warns...)
	states := workflow.StatesFromLabels(is.LabelNames())
	v.State = v.Record.State
	switch {
	case v.State == "" && !slices.Contains(is.LabelNames(), workflow.LabelBuild):
		return nil, inputErrorf("#%d is not enrolled: run `gh ralph enroll %d` (or add the %s label)", n, n, workflow.LabelBuild)
	case len(states) == 1 && startsFrom(v.State, states[0]):
		v.Running = states[0]
	case v.State == "" && len(states) > 0:
		v.Warnings = append(v.Warnings, fmt.Sprintf("the label %s is not backed by a record of ralph's: it enrolls nothing", joinLabels(states)))
	case v.State != "" && (len(states) != 1 || states[0] != v.State):
		v.Warnings = append(v.Warnings, fmt.Sprintf("the state labels (%s) disagree with ralph's record (%s); the next run puts them back", joinLabels(states), v.State.Label()))
	}
	if l := v.Record.Last; l != nil && l.To == v.State && !l.At.IsZero() {
		v.Since = l.At
	}
	return v, nil
}

// startsFrom says whether running is the state a step takes the issue to from the record's state when it
// starts (from "", the one the enrollment puts it in, in the same run).
func startsFrom(from, running workflow.State) bool {
	if running.Kind() != workflow.Lock {
		return false
	}
	for _, t := range workflow.Transitions() {
		if t.Event == workflow.Start && t.To == running && (t.From == from || from == "" && workflow.Check("", workflow.Enroll, t.From) == nil) {
			return true
		}
	}
	return false
}

// FindRecord is issue n's record among its comments, read as a run reads it: only a status comment ralph
// (or someone with write access) wrote counts, and only a record ralph would have written. The warnings
// name what was passed over.
func FindRecord(ctx context.Context, gh StatusReader, cfg config.Config, n int, comments []ghapi.Comment) (Record, bool, []string, error) {
	may := PermissionAuthorizer{Permission: gh.Permission, AllowedBots: cfg.AllowedBots}.Authorize
	identity := OnceIdentity(gh.Viewer)
	var warns []string
	for _, c := range comments {
		if !isStatus(c.Body) {
			continue
		}
		own, err := WroteRecord(ctx, c.User, may, identity)
		if err != nil {
			return Record{}, false, nil, fmt.Errorf("checking who wrote a status comment of #%d: %w", n, err)
		}
		if !own {
			warns = append(warns, fmt.Sprintf("ignored a comment by @%s that starts with ralph's status marker: only ralph's own record counts", c.User.Login))
			continue
		}
		rec, ok, err := ParseRecord(c.Body)
		if err == nil && ok {
			if cerr := rec.check(cfg); cerr != nil {
				return Record{}, false, append(warns, "ralph cannot use the record of its status comment: "+cerr.Error()), nil
			}
		}
		if err != nil {
			warns = append(warns, err.Error())
		}
		return rec, ok, warns, nil
	}
	return Record{}, false, warns, nil
}

// ReadRecords reads each issue's record (none: not in the map): one request per issue (its comments), a few
// at a time.
func ReadRecords(ctx context.Context, gh StatusReader, cfg config.Config, issues []ghapi.Issue) (map[int]*Record, error) {
	out := make(map[int]*Record, len(issues))
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, is := range issues {
		g.Go(func() error {
			comments, err := gh.Comments(ctx, is.Number)
			if err != nil {
				return fmt.Errorf("reading comments of #%d: %w", is.Number, err)
			}
			rec, ok, _, err := FindRecord(ctx, gh, cfg, is.Number, comments)
			if err != nil || !ok {
				return err
			}
			mu.Lock()
			out[is.Number] = &rec
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

func joinLabels(states []workflow.State) string {
	var names []string
	for _, s := range states {
		names = append(names, s.Label())
	}
	return strings.Join(names, ", ")
}
