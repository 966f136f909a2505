package workspace

import (
	"context"
	"fmt"
)

// Publishing: in the Action, the commits ralph built are not pushed as they are but made again by GitHub,
// which signs a commit that an API request made with no author, committer or signature: git sends the
// objects (blobs and trees, with their modes, symlinks and sizes exactly) to a ref of ralph's own, GitHub
// makes the commit of the same tree on the same parent with the same message, and the branch is moved to it.
// GitHub's answer carries the signed commit whole (its verification's payload and signature), so ralph
// writes it into its own repository, checks that it has GitHub's id, and moves the branch with a git push
// with lease: the commit is the only API request.

// Publisher makes commits on GitHub and moves ralph's branch to them; compose adapts ghapi.Client.
type Publisher interface {
	// Publish makes a commit of tree on parents with message, with no author, committer or signature,
	// and says whether GitHub verified it (and why not).
	Publish(ctx context.Context, message, tree string, parents []string) (Published, error)
	// MoveBranch points branch at sha: it creates the branch when old is "", else moves it only by a
	// fast-forward from old. A refusal is a *git.PushRejectedError. It is used only when a commit GitHub
	// made cannot be written locally (GitHub did not sign it).
	MoveBranch(ctx context.Context, branch, sha, old string) error
}

// PublishWith has GitHub make the commits ralph pushes from now on (see Publisher).
func (s *Store) PublishWith(p Publisher) { s.opts.Publisher = p }

// Published is a commit GitHub made: its id, its verification, and, when GitHub signed it, the commit
// object without its gpgsig header (Payload) and that header's value (Signature).
type Published struct {
	SHA                string
	Verified           bool
	Reason             string
	Payload, Signature string
}

// Unverified is a commit ralph published that GitHub did not verify.
type Unverified struct {
	SHA, Reason string
}

// publish makes the commits built since the remote's branch again on GitHub (see Publisher) and moves the
// branch to the last of them.
func (w *Workspace) publish(ctx context.Context) error {
	repo := w.store.repo
	parent := w.RemoteOld
	if parent == "" {
		parent = w.Start
	}
	commits, err := repo.Unpushed(ctx, parent, w.built)
	if err != nil {
		return err
	}
	// The objects first, under a ref of ralph's own that no branch rule governs.
	objects := "refs/ralph/objects/" + w.built
	if err := repo.PushRef(ctx, w.built, objects, ""); err != nil {
		return fmt.Errorf("sending the commit's objects: %w", err)
	}
	sent := true
	defer func() {
		// A publication that failed leaves no ref behind either (GitHub's commits of it are unreferenced).
		if sent {
			_ = repo.DeleteRemoteRef(context.WithoutCancel(ctx), objects, w.built)
		}
	}()
	local := true // every commit GitHub made so far is written in ralph's repository
	for _, c := range commits {
		tree, err := repo.TreeOf(ctx, c)
		if err != nil {
			return err
		}
		msg, err := repo.Message(ctx, c)
		if err != nil {
			return err
		}
		p, err := w.store.opts.Publisher.Publish(ctx, msg, tree, []string{parent})
		if err != nil {
			return fmt.Errorf("making the commit on GitHub: %w", err)
		}
		if !p.Verified {
			w.Unverified = append(w.Unverified, Unverified{SHA: p.SHA, Reason: p.Reason})
		}
		if local && p.Payload != "" && p.Signature != "" {
			// GitHub's commit, rebuilt from its answer; an id that differs means it is not GitHub's.
			sha, err := repo.WriteSignedCommit(ctx, p.Payload, p.Signature)
			local = err == nil && sha == p.SHA
		} else {
			local = false
		}
		parent = p.SHA
	}
	if local {
		// The branch moves by a compare-and-swap push from where the step found it.
		if err := repo.Push(ctx, parent, w.Branch, w.RemoteOld); err != nil {
			return err
		}
	} else if err := w.store.opts.Publisher.MoveBranch(ctx, w.Branch, parent, w.RemoteOld); err != nil {
		return err
	}
	sent = false
	if err := repo.DeleteRemoteRef(ctx, objects, w.built); err != nil {
		return fmt.Errorf("removing %s: %w", objects, err)
	}
	if !local {
		// ralph's repository gets GitHub's commit, on which the step's next commit builds.
		if _, _, err := repo.FetchRef(ctx, "refs/heads/"+w.Branch); err != nil {
			return err
		}
	}
	if err := repo.KeepRef(ctx, w.keptRef(), parent); err != nil {
		return err
	}
	w.head, w.built = parent, parent
	return nil
}
