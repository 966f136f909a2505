package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Pushing: only to ralph's branches and refs, under a lease, knowing a push that landed though its answer
// was lost.

// PushRejectedError is a push the remote refused: the lease did not hold, the
// update was not a fast-forward, or a server-side rule declined it.
type PushRejectedError struct {
	Branch string
	Reason string // as git reports it, e.g. "stale info" or "pre-receive hook declined"
	// Rules are the repository rules GitHub said the push broke (its GH013 answer: "Commits must have
	// verified signatures."), as the remote wrote them; none when no rule refused it.
	Rules []string
}

// Push pushes commit sha (one ralph built) to refs/heads/<branch> on the remote, but only if the branch
// is still at expectOld; expectOld "" means the branch must not exist yet. If the branch already points at
// sha the push succeeds, so repeating a push that went through is harmless. A refusal is a
// *PushRejectedError.
func (r *Repo) Push(ctx context.Context, sha, branch, expectOld string) error {
	if strings.HasPrefix(branch, "-") {
		return fmt.Errorf("invalid branch name %q", branch)
	}
	return r.PushRef(ctx, sha, "refs/heads/"+branch, expectOld)
}

// PushRef is Push to any ref: a compare-and-swap of ref on the remote, from expectOld ("": absent) to sha.
func (r *Repo) PushRef(ctx context.Context, sha, ref, expectOld string) error {
	name := strings.TrimPrefix(ref, "refs/heads/")
	if _, err := r.run(ctx, "", nil, "check-ref-format", ref); err != nil || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("invalid ref name %q", ref)
	}
	if !isSHA(sha) {
		return fmt.Errorf("push: %q is not a commit id", sha)
	}
	return r.push(ctx, name, ref+":"+expectOld, sha+":"+ref)
}

// DeleteRemoteRef deletes ref on the remote, but only while it is at expectOld: a compare-and-delete in
// one push. A ref that moved or is gone is a refusal, a *PushRejectedError.
func (r *Repo) DeleteRemoteRef(ctx context.Context, ref, expectOld string) error {
	if _, err := r.run(ctx, "", nil, "check-ref-format", ref); err != nil || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("invalid ref name %q", ref)
	}
	if !isSHA(expectOld) {
		return fmt.Errorf("push: %q is not a commit id", expectOld)
	}
	return r.push(ctx, strings.TrimPrefix(ref, "refs/heads/"), ref+":"+expectOld, ":"+ref)
}

// DestinationError is a push ralph refuses to make: its destination is not one of ralph's own refs.
type DestinationError struct {
	Ref    string
	Reason string
}

// destination says whether ralph may write ref on the remote: a branch under Branches that is not the
// remote's default branch, or a ref under refs/ralph/. Every push and remote delete passes here, so a
// record, a config or a caller that names another branch (the base branch, a branch of a person's) can
// never make ralph write it.
func (r *Repo) destination(ref string) error {
	if rest, ok := strings.CutPrefix(ref, "refs/ralph/"); ok && rest != "" {
		return nil
	}
	name, ok := strings.CutPrefix(ref, "refs/heads/")
	switch {
	case !ok:
		return &DestinationError{Ref: ref, Reason: "only branches under its branch prefix and refs under refs/ralph/ are ralph's"}
	case r.Branches == "":
		return &DestinationError{Ref: ref, Reason: "no branch prefix is set, so no branch is ralph's"}
	case !strings.HasPrefix(name, r.Branches) || len(name) == len(r.Branches):
		return &DestinationError{Ref: ref, Reason: fmt.Sprintf("it is not under the branch prefix %q", r.Branches)}
	case r.base != "" && name == r.base:
		return &DestinationError{Ref: ref, Reason: "it is the repository's default branch"}
	}
	return nil
}

// push pushes one refspec under a lease (ref:expected value) and words a refusal as a *PushRejectedError.
func (r *Repo) push(ctx context.Context, name, lease, refspec string) error {
	_, dst, _ := strings.Cut(refspec, ":")
	if err := r.destination(dst); err != nil {
		return err
	}
	out, err := r.run(ctx, "", r.authEnv(), "push", "--porcelain", "--no-verify", "--force-with-lease="+lease, r.URL, refspec)
	if err == nil {
		return nil
	}
	// The reason is the remote's text: it may repeat what it was sent.
	reason, ok := rejection(string(out))
	var ce *CommandError
	if !ok && errors.As(err, &ce) {
		reason, ok = rejection(ce.Stderr)
	}
	if !ok {
		return fmt.Errorf("push to %s: %w", name, err)
	}
	if r.landed(ctx, refspec) {
		// An earlier try went through and only its answer was lost (see NetRetry): the remote is where
		// this compare-and-swap was to move it. (A delete is not taken for done: a ref that is gone may
		// have been deleted by another run, which a caller must learn.)
		return nil
	}
	rej := &PushRejectedError{Branch: name, Reason: r.redactor().string(reason)}
	if ce != nil || errors.As(err, &ce) {
		for _, rule := range ruleViolations(ce.Stderr) {
			rej.Rules = append(rej.Rules, r.redactor().string(rule))
		}
	}
	return rej
}

// ruleViolations finds, in git's stderr, the rules of GitHub's GH013 answer to a push that breaks a
// repository rule:
//
//	remote: error: GH013: Repository rule violations found for refs/heads/ralph/1-x.
//	remote: Review all repository rules at https://github.com/o/r/rules?ref=refs%2Fheads%2Fralph%2F1-x
//	remote:
//	remote: - Commits must have verified signatures.
//	remote:   Found 1 violation:
func ruleViolations(stderr string) []string {
	var rules []string
	in := false
	for _, line := range strings.Split(stderr, "\n") {
		t, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "remote: ")
		if !ok {
			t, ok = strings.CutPrefix(line, "remote:")
		}
		switch {
		case !ok:
			in = false
		case strings.Contains(t, "GH013:"):
			in = true
		case in && strings.HasPrefix(t, "- "):
			rules = append(rules, strings.TrimSpace(strings.TrimPrefix(t, "- ")))
		}
	}
	return rules
}

// landed says whether the remote's ref is already at the commit refspec ("sha:ref") moves it to.
func (r *Repo) landed(ctx context.Context, refspec string) bool {
	sha, ref, _ := strings.Cut(refspec, ":")
	if sha == "" {
		return false
	}
	out, err := r.run(ctx, "", r.authEnv(), "ls-remote", r.URL, ref)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if got, name, _ := strings.Cut(line, "\t"); name == ref {
			return got == sha
		}
	}
	return false
}

// rejection finds a refused ref in push output: porcelain lines
// "!\t<from>:<to>\t[rejected] (reason)" or the human form " ! [rejected] ... (reason)".
func rejection(out string) (string, bool) {
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "!") {
			continue
		}
		for _, kind := range []string{"[remote rejected]", "[rejected]"} {
			if _, after, ok := strings.Cut(t, kind); ok {
				reason := strings.TrimSpace(after)
				reason = strings.TrimSuffix(strings.TrimPrefix(reason, "("), ")")
				if reason == "" {
					reason = strings.Trim(kind, "[]")
				}
				return reason, true
			}
		}
	}
	return "", false
}
