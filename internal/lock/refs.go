package lock

import (
	"context"
	"errors"
	"net/http"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Repo is what GitRefs needs of ralph's repository; *git.Repo implements it.
type Repo interface {
	ReadRef(ctx context.Context, ref string) (sha string, found bool, err error)
	Message(ctx context.Context, sha string) (string, error)
	CommitNote(ctx context.Context, msg, parent string, author git.Signature) (string, error)
	PushRef(ctx context.Context, sha, ref, expectOld string) error
	DeleteRemoteRef(ctx context.Context, ref, expectOld string) error
	RemoteRefs(ctx context.Context, prefix string) (map[string]string, error)
}

var _ Repo = (*git.Repo)(nil)

// GitRefs keeps the lock refs with git: the lock commit is written in ralph's repository and pushed with
// an exact lease (--force-with-lease=<ref>:<expected>, empty for "absent"), which the remote applies
// atomically; a delete is a push with a lease too. Git round trips, no API request.
type GitRefs struct {
	Repo   Repo
	Author git.Signature // of the lock commits; empty: ralph
}

var _ Refs = GitRefs{}

func (g GitRefs) author() git.Signature {
	if g.Author.Name == "" || g.Author.Email == "" {
		return git.Signature{Name: "ralph", Email: "ralph@users.noreply.github.com"}
	}
	return g.Author
}

// Swap pushes the new lock commit with the lease. A push that failed other than by a refusal (the
// connection broke) may have taken effect all the same: the ref at the commit this swap wrote says it did.
func (g GitRefs) Swap(ctx context.Context, ref, parent, msg string) (string, error) {
	sha, err := g.Repo.CommitNote(ctx, msg, parent, g.author())
	if err != nil {
		return "", err
	}
	err = moved(g.Repo.PushRef(ctx, sha, ref, parent))
	if err != nil && !errors.Is(err, ErrMoved) {
		if cur, found, rerr := g.Repo.ReadRef(ctx, ref); rerr == nil && found && cur == sha {
			return sha, nil
		}
	}
	return sha, err
}

func (g GitRefs) Read(ctx context.Context, ref string) (sha, msg string, found bool, err error) {
	sha, found, err = g.Repo.ReadRef(ctx, ref)
	if err != nil || !found {
		return "", "", false, err
	}
	msg, err = g.Repo.Message(ctx, sha)
	return sha, msg, err == nil, err
}

// Delete pushes the deletion with the lease; one that failed other than by a refusal may have taken
// effect all the same, which a look at the ref tells.
func (g GitRefs) Delete(ctx context.Context, ref, sha string) error {
	err := moved(g.Repo.DeleteRemoteRef(ctx, ref, sha))
	if err != nil && !errors.Is(err, ErrMoved) {
		if cur, found, rerr := g.Repo.ReadRef(ctx, ref); rerr == nil && cur != sha {
			if !found {
				return nil
			}
			return ErrMoved
		}
	}
	return err
}

func (g GitRefs) List(ctx context.Context, prefix string) ([]string, error) {
	refs, err := g.Repo.RemoteRefs(ctx, prefix)
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	return names, err
}

// moved words a push the remote refused (its lease did not hold) as ErrMoved.
func moved(err error) error {
	var rej *git.PushRejectedError
	if errors.As(err, &rej) {
		return ErrMoved
	}
	return err
}

// API is what RESTRefs needs of GitHub; *ghapi.Client implements it.
type API interface {
	CreateCommit(ctx context.Context, message, tree string, parents []string) (ghapi.GitCommit, error)
	Commit(ctx context.Context, sha string) (ghapi.GitCommit, error)
	GetRef(ctx context.Context, ref string) (ghapi.Ref, error)
	CreateRef(ctx context.Context, ref, sha string) error
	UpdateRef(ctx context.Context, ref, sha string, force bool) error
	DeleteRef(ctx context.Context, ref string) error
	MatchingRefs(ctx context.Context, prefix string) ([]ghapi.Ref, error)
}

// RESTRefs keeps the lock refs through GitHub's REST git API, which creates a ref only when it does not
// exist and moves it only by a fast-forward: two requests a swap. It is for where ralph has no repository
// of its own (gh ralph approve outside a checkout).
type RESTRefs struct{ API API }

var _ Refs = RESTRefs{}

func (r RESTRefs) Swap(ctx context.Context, ref, parent, msg string) (string, error) {
	var parents []string
	if parent != "" {
		parents = []string{parent}
	}
	c, err := r.API.CreateCommit(ctx, msg, ghapi.EmptyTree, parents)
	if err != nil {
		return "", err
	}
	if parent == "" {
		err = r.API.CreateRef(ctx, ref, c.SHA)
	} else {
		// A fast-forward from parent, the only commit the new one descends from: refused if the ref moved.
		err = r.API.UpdateRef(ctx, ref[len("refs/"):], c.SHA, false)
	}
	var ge *ghapi.Error
	if errors.As(err, &ge) && ge.Status == http.StatusUnprocessableEntity {
		return c.SHA, ErrMoved
	}
	return c.SHA, err
}

func (r RESTRefs) Read(ctx context.Context, ref string) (sha, msg string, found bool, err error) {
	cur, err := r.API.GetRef(ctx, ref[len("refs/"):])
	if errors.Is(err, ghapi.ErrNotFound) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	c, err := r.API.Commit(ctx, cur.Object.SHA)
	if err != nil {
		return "", "", false, err
	}
	return cur.Object.SHA, c.Message, true, nil
}

// Delete reads the ref, then deletes it: the REST API has no compare-and-delete. Between the two, only a
// run that found this lease expired could take the lock over.
func (r RESTRefs) Delete(ctx context.Context, ref, sha string) error {
	cur, err := r.API.GetRef(ctx, ref[len("refs/"):])
	if errors.Is(err, ghapi.ErrNotFound) {
		return ErrMoved
	}
	if err != nil {
		return err
	}
	if cur.Object.SHA != sha {
		return ErrMoved
	}
	return r.API.DeleteRef(ctx, ref[len("refs/"):])
}

func (r RESTRefs) List(ctx context.Context, prefix string) ([]string, error) {
	refs, err := r.API.MatchingRefs(ctx, prefix[len("refs/"):])
	names := make([]string, 0, len(refs))
	for _, ref := range refs {
		names = append(names, ref.Ref)
	}
	return names, err
}
