package record

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Found is ralph's status comment among an issue's comments and the record it holds, as every reader of
// ralph's record takes it (Find): the run, gh ralph status and the pipeline, a parent reading a sub-issue.
type Found struct {
	// Status is ralph's status comment (nil: none): the first comment that starts with ralph's status marker
	// and that ralph, or someone with write access, wrote. It points into the comments Find was given.
	Status *ghapi.Comment
	// Record is the record Status holds; set only when Unusable is nil.
	Record Record
	// Unusable is why ralph cannot use what Status holds: no record, a record block it cannot read, or a
	// record ralph would not have written. A run refuses the issue (a person must repair the comment);
	// status warns.
	Unusable error
	// Ignored are the comments that start with ralph's status marker that neither ralph nor anyone with
	// write access wrote: passed over, never believed nor edited.
	Ignored []ghapi.Comment
}

// Has says whether a record ralph can use was found.
func (f Found) Has() bool { return f.Status != nil && f.Unusable == nil }

// Warnings say, for a person, what Find passed over or could not use.
func (f Found) Warnings() []string {
	var out []string
	for _, c := range f.Ignored {
		out = append(out, fmt.Sprintf("ignored a comment by @%s that starts with ralph's status marker: only ralph's own record counts", c.User.Login))
	}
	if f.Status != nil && f.Unusable != nil {
		out = append(out, "ralph cannot use the record of its status comment: "+f.Unusable.Error())
	}
	return out
}

// Find is the one place ralph finds its record among an issue's comments, with one policy for every
// reader: only a status comment that wrote says ralph (or someone with write access) wrote counts (the
// first such), and only a record ralph would have written (Record.Check under cfg and isStep) is used. wrote
// is asked only of comments that start with the status marker; its error is Find's.
func Find(ctx context.Context, comments []ghapi.Comment, cfg config.Config, isStep func(workflow.Event) bool, wrote func(ctx context.Context, u ghapi.User) (bool, error)) (Found, error) {
	var f Found
	for i, c := range comments {
		if !IsStatus(c.Body) {
			continue
		}
		own, err := wrote(ctx, c.User)
		if err != nil {
			return Found{}, fmt.Errorf("checking who wrote a status comment: %w", err)
		}
		switch {
		case !own:
			f.Ignored = append(f.Ignored, c)
		case f.Status == nil:
			f.Status = &comments[i]
		}
	}
	if f.Status == nil {
		return f, nil
	}
	rec, ok, err := Parse(f.Status.Body)
	if err == nil && !ok {
		err = errors.New("it holds no record")
	}
	if err == nil {
		err = rec.Check(cfg, isStep)
	}
	if err != nil {
		f.Unusable = err
		return f, nil
	}
	f.Record = rec
	return f, nil
}
