package githubtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// PushCommit pushes a commit to branch as person would from their own clone: files (path → content) are
// written on top of the branch's tree, the commit's author and committer are person, and the branch moves
// to it (it is created from the default branch when new). It returns the commit's SHA. This is a person's
// push racing ralph's, or a push that starts the repository's checks.
func (s *Server) PushCommit(branch, person, message string, files map[string]string) string {
	s.t.Helper()
	parent := s.branchSHA(branch)
	base := parent
	if base == "" {
		base = s.branchSHA(s.opts.DefaultBranch)
	}
	index := filepath.Join(s.t.TempDir(), "index")
	run := func(stdin *strings.Reader, args ...string) string {
		cmd := gitCommand(s.BareRepo, stdin, args...)
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
		out, err := cmd.Output()
		if err != nil {
			s.t.Fatalf("githubtest: PushCommit: git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	run(nil, "read-tree", base)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		blob := run(strings.NewReader(files[p]), "hash-object", "-w", "--stdin")
		run(nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := run(nil, "write-tree")
	_ = os.Remove(index)
	who := &gitPerson{name: person, email: person + "@users.noreply.example.com"}
	sha, err := s.writeCommit(tree, []string{base}, message, who, who)
	if err != nil {
		s.t.Fatalf("githubtest: PushCommit: %v", err)
	}
	old := parent
	if old == "" {
		old = zeroSHA
	}
	if err := s.updateRef("refs/heads/"+branch, sha, old); err != nil {
		s.t.Fatalf("githubtest: PushCommit: %s moved meanwhile: %v", branch, fmt.Sprint(err))
	}
	s.mu.Lock()
	s.knowUser(person)
	s.mu.Unlock()
	return sha
}
