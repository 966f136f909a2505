package githubtest

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Git data lives only in the bare repository: every read and write runs git on it,
// so what a client does through the API and what it pushes agree, and ref updates
// are as atomic as git makes them.

const zeroSHA = "0000000000000000000000000000000000000000"

type gitRef struct {
	name, sha, kind string // kind: commit, tree, blob, tag
}

// git runs git on the bare repository and answers its trimmed standard output.
func (s *Server) git(stdin *strings.Reader, args ...string) (string, error) {
	cmd := gitCommand(s.BareRepo, stdin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// refs lists the refs whose full name starts with prefix (a string prefix, as GitHub's
// matching-refs does).
func (s *Server) refs(prefix string) ([]gitRef, error) {
	out, err := s.git(nil, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	var refs []gitRef
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasPrefix(f[0], prefix) {
			refs = append(refs, gitRef{f[0], f[1], f[2]})
		}
	}
	return refs, nil
}

// ref looks up one ref by full name.
func (s *Server) ref(name string) (gitRef, bool, error) {
	refs, err := s.refs(name)
	if err != nil {
		return gitRef{}, false, err
	}
	for _, r := range refs {
		if r.name == name {
			return r, true, nil
		}
	}
	return gitRef{}, false, nil
}

// objectType answers the type of object sha, or "" when the repository lacks it.
func (s *Server) objectType(sha string) string {
	if !isSHA(sha) {
		return ""
	}
	t, err := s.git(nil, "cat-file", "-t", sha)
	if err != nil {
		return ""
	}
	return t
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

var errRefExists = errors.New("reference already exists")

// createRef creates ref at sha only if it does not exist yet: git checks and writes
// under its ref lock, so of two concurrent creators exactly one wins.
func (s *Server) createRef(name, sha string) error {
	return s.retryLocked(func() error {
		_, err := s.git(nil, "update-ref", name, sha, zeroSHA)
		if err != nil {
			if _, ok, _ := s.ref(name); ok {
				return errRefExists
			}
		}
		return err
	})
}

// updateRef moves ref from old to sha, failing if it moved meanwhile.
func (s *Server) updateRef(name, sha, old string) error {
	return s.retryLocked(func() error {
		_, err := s.git(nil, "update-ref", name, sha, old)
		return err
	})
}

// retryLocked retries f while another git process holds the ref's lock file (git
// fails at once rather than wait), as GitHub serializes concurrent updates of a ref.
func (s *Server) retryLocked(f func() error) error {
	for i := 0; ; i++ {
		err := f()
		if err == nil || i == 100 || !strings.Contains(err.Error(), ".lock") {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) isAncestor(ancestor, descendant string) bool {
	_, err := s.git(nil, "merge-base", "--is-ancestor", ancestor, descendant)
	return err == nil
}

// branchSHA answers the commit a branch points at, or "".
func (s *Server) branchSHA(branch string) string {
	r, ok, err := s.ref("refs/heads/" + branch)
	if err != nil || !ok {
		return ""
	}
	return r.sha
}

// resolveCommit resolves a commit-ish the way GET /commits/{ref} does: a SHA, a
// branch or tag name, or heads/… and tags/….
func (s *Server) resolveCommit(ref string) string {
	candidates := []string{"refs/heads/" + ref, "refs/tags/" + ref, "refs/" + ref}
	if isSHA(ref) {
		candidates = append([]string{ref}, candidates...)
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, "refs/") {
			if _, ok, _ := s.ref(c); !ok {
				continue
			}
		}
		if sha, err := s.git(nil, "rev-parse", "--verify", "--quiet", c+"^{commit}"); err == nil && sha != "" {
			return sha
		}
	}
	return ""
}

type gitPerson struct {
	name, email string
	date        time.Time
}

type gitCommit struct {
	sha, tree         string
	parents           []string
	author, committer gitPerson
	message           string
}

func (s *Server) readCommit(sha string) (gitCommit, error) {
	out, err := gitCommand(s.BareRepo, nil, "cat-file", "commit", sha).Output()
	if err != nil {
		return gitCommit{}, err
	}
	head, msg, _ := strings.Cut(string(out), "\n\n")
	c := gitCommit{sha: sha, message: msg}
	for _, line := range strings.Split(head, "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "tree":
			c.tree = val
		case "parent":
			c.parents = append(c.parents, val)
		case "author":
			c.author = parsePerson(val)
		case "committer":
			c.committer = parsePerson(val)
		}
	}
	return c, nil
}

// parsePerson reads "Name <email> 1700000000 +0000".
func parsePerson(v string) gitPerson {
	name, rest, _ := strings.Cut(v, " <")
	email, rest, _ := strings.Cut(rest, "> ")
	secs, _, _ := strings.Cut(rest, " ")
	n, _ := strconv.ParseInt(secs, 10, 64)
	return gitPerson{name: name, email: email, date: time.Unix(n, 0).UTC()}
}

// writeCommit stores a commit object; author and committer default to the bot.
func (s *Server) writeCommit(tree string, parents []string, message string, author, committer *gitPerson) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	cmd := gitCommand(s.BareRepo, strings.NewReader(message), args...)
	if author != nil {
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME="+author.name, "GIT_AUTHOR_EMAIL="+author.email)
		if !author.date.IsZero() {
			cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+author.date.Format(time.RFC3339))
		}
	}
	if committer != nil {
		cmd.Env = append(cmd.Env, "GIT_COMMITTER_NAME="+committer.name, "GIT_COMMITTER_EMAIL="+committer.email)
		if !committer.date.IsZero() {
			cmd.Env = append(cmd.Env, "GIT_COMMITTER_DATE="+committer.date.Format(time.RFC3339))
		}
	}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git commit-tree: %s", bytes.TrimSpace(ee.Stderr))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
