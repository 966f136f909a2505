// Package workspace is where one step's agent works and how its work becomes a pushed commit. ralph keeps
// its own git directory and index where the agent cannot write; the agent gets a copy of the repository of
// its own (with its own HOME and TMPDIR), which ralph afterwards reads as files only: it records them in its
// own index, checks that exact tree against the base, commits it itself and pushes that commit.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Limits cap what ralph accepts from the agent.
type Limits struct {
	File     int64 // bytes of one file in the change
	Total    int64 // bytes of all files the change adds or modifies
	Document int64 // bytes of a document (research, plan, review)
	Files    int   // entries (files, links, directories) ralph reads in the agent's copy; 0: the default
	// IgnoreTests bounds the work the agent's .gitignore files make: each untracked entry is tested
	// against every pattern in effect where it is, and the agent writes the patterns; 0: the default.
	IgnoreTests int64
}

// DefaultLimits: GitHub itself refuses files over 100 MiB and warns at 50 MiB; a repository of half a
// million files is a very large one, and 200 ignore patterns in effect for each of its files a great many
// (a test of a pattern took 75–150 ns on a 2-core machine: 100 million take 8–15 s).
var DefaultLimits = Limits{File: 25 << 20, Total: 200 << 20, Document: 1 << 20, Files: 500_000, IgnoreTests: 100_000_000}

// Owner is the agent's identity when it runs as a user of its own; its copy, HOME and TMPDIR are given to
// it. Zero: the agent is ralph's own user (gh ralph on a laptop).
type Owner struct {
	UID, GID int
}

// Options say where ralph keeps its repository and the agents' copies.
type Options struct {
	GitDir string // ralph's own git directory; the agent must not be able to write there
	Agents string // where each issue's agent area is made: <Agents>/<issue>/{repo,home,tmp}
	Source string // the user's checkout: its objects are borrowed and its origin is the remote
	URL    string // the remote, when not the checkout's origin
	Auth   git.Auth
	Runner git.Runner
	Owner  Owner
	// Protected says why a path is one the agent may not change ("protected_paths", "ralph's own
	// configuration"), or "" when it may change it.
	Protected func(path string) string
	Limits    Limits
	// Branches is the prefix of the branches ralph may push (branch_prefix); see git.Repo.Branches.
	Branches string
	// Publisher, when set, has GitHub make ralph's commits so that it signs them (publish.go); nil: ralph
	// pushes its own commits.
	Publisher Publisher
}

// Store is ralph's repository and the place where agent areas are made.
type Store struct {
	opts Options
	repo *git.Repo
}

// Open opens (or makes) ralph's repository.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	if opts.Limits.Files == 0 {
		opts.Limits.Files = DefaultLimits.Files
	}
	if opts.Limits.IgnoreTests == 0 {
		opts.Limits.IgnoreTests = DefaultLimits.IgnoreTests
	}
	if opts.Protected == nil {
		opts.Protected = func(string) string { return "" }
	}
	if opts.Runner == nil {
		opts.Runner = git.ExecRunner{}
	}
	// Checkout runs git in the new copy: a relative path would be resolved there.
	for _, p := range []*string{&opts.GitDir, &opts.Agents} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	repo, err := git.Open(ctx, opts.Runner, opts.GitDir, opts.Source, opts.URL, opts.Auth)
	if err != nil {
		return nil, err
	}
	repo.Branches = opts.Branches
	return &Store{opts: opts, repo: repo}, nil
}

// Repo is ralph's repository.
func (s *Store) Repo() *git.Repo { return s.repo }

// Workspace is one step's agent area: the agent's copy of the branch, its HOME and TMPDIR, and ralph's
// record of what the branch was and what ralph has built on it.
type Workspace struct {
	Dir  string // the agent's copy of the repository, its working directory
	Home string // its HOME
	Tmp  string // its TMPDIR

	Branch    string
	Base      string // the base branch's commit
	Start     string // the branch's commit when the step began (Base for a new branch)
	RemoteOld string // the branch's commit on the remote, "" while it does not exist

	store *Store
	issue int
	area  string
	index string           // ralph's own index for this area
	head  string           // the commit ralph's next commit builds on: Start, then what ralph built
	built string           // the last commit ralph built in this step ("" none)
	tree  string           // the tree the last Collect checked
	known map[string]known // the files ralph wrote into the copy, as it left them
	// Unverified are the commits ralph published in this step that GitHub did not verify.
	Unverified []Unverified
	// kept is where ralph's repository keeps the last commit it built on the branch ("": keptRef(issue));
	// own is, on a documents branch, the commit ralph last made there as its record says (documents.go).
	kept, own string
}

// remoteHeads reads the remote's heads of branch and base: base's commit, which must exist, and the
// refspec that fetches base.
func (s *Store) remoteHeads(ctx context.Context, branch, base string) (heads map[string]string, bsha string, refspecs []string, err error) {
	_, heads, err = s.repo.RemoteHeads(ctx, branch, base)
	if err != nil {
		return nil, "", nil, err
	}
	bsha, ok := heads[base]
	if !ok {
		return nil, "", nil, fmt.Errorf("base branch %s does not exist on the remote", base)
	}
	return heads, bsha, []string{"+refs/heads/" + base + ":refs/remotes/origin/" + base}, nil
}

// Prepare gives the agent of issue a fresh area at the tip of branch (or at base when the branch does not
// exist yet): ralph fetches both, writes the files into the agent's copy, and gives that copy a git
// repository of the agent's own. Only then is the copy the agent's: the area is made anew, and no process
// of any agent exists while ralph's git writes into it (every one is gone when a step ends), so no git
// ralph runs ever works in a directory an agent's process could write at that time.
func (s *Store) Prepare(ctx context.Context, issue int, branch, base string) (*Workspace, error) {
	heads, bsha, refspecs, err := s.remoteHeads(ctx, branch, base)
	if err != nil {
		return nil, err
	}
	start, old := bsha, ""
	if sha, ok := heads[branch]; ok {
		refspecs = append(refspecs, "+refs/heads/"+branch+":refs/remotes/origin/"+branch)
		start, old = sha, sha
	}
	if err := s.repo.Fetch(ctx, refspecs...); err != nil {
		return nil, err
	}
	area := filepath.Join(s.opts.Agents, strconv.Itoa(issue))
	if err := removeAll(area); err != nil {
		return nil, fmt.Errorf("clearing the agent area of #%d: %w", issue, err)
	}
	w := &Workspace{
		Dir: filepath.Join(area, "repo"), Home: filepath.Join(area, "home"), Tmp: filepath.Join(area, "tmp"),
		Branch: branch, Base: bsha, Start: start, RemoteOld: old,
		store: s, issue: issue, area: area, index: filepath.Join(s.opts.GitDir, "index-"+strconv.Itoa(issue)), head: start,
	}
	if err := os.MkdirAll(area, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{w.Dir, w.Home, w.Tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	_ = os.Remove(w.index)
	if err := s.repo.Checkout(ctx, w.index, w.Dir, start); err != nil {
		return nil, err
	}
	if err := s.repo.InitCopy(ctx, w.Dir, w.index, start); err != nil {
		return nil, err
	}
	if o := s.opts.Owner; o.UID != 0 {
		for _, d := range []string{w.Dir, w.Home, w.Tmp} {
			if err := chownTree(d, o.UID, o.GID); err != nil {
				return nil, fmt.Errorf("giving the agent its area: %w", err)
			}
		}
	}
	if err := w.remember(ctx, start); err != nil {
		return nil, err
	}
	return w, nil
}

// Writable are the directories the agent may write: its copy, HOME and TMPDIR.
func (w *Workspace) Writable() []string { return []string{w.Dir, w.Home, w.Tmp} }

// Close removes the agent area (ralph's repository keeps what it built).
func (w *Workspace) Close() error {
	_ = os.Remove(w.index)
	return removeAll(w.area)
}

// Committed returns the content of a file at the commit the step began from, as ralph's repository has
// it ("" when there is none): earlier documents come from there, never from the agent's copy.
func (w *Workspace) Committed(ctx context.Context, rel string) (string, error) {
	if rel == "" {
		return "", nil
	}
	b, found, err := w.store.repo.File(ctx, w.head, rel, w.store.opts.Limits.Document)
	if err != nil || !found {
		return "", err
	}
	return string(b), nil
}

// FindStep finds the commit of a step on the branch (by its trailer), left by a run that stopped after
// pushing it. Only commits on the remote branch count; the agent's own history is never read.
//
// Besides, ralph's repository keeps the last commit it built for the issue (keptRef): when an earlier run
// built the step's commit on the branch as it still is and could not push it (GitHub failed, the run was
// interrupted), that commit is found, checked again, and becomes this step's to push (Built), so the agent's
// work is not done twice.
func (w *Workspace) FindStep(ctx context.Context, key, value string) (string, bool, error) {
	sha, found, err := w.store.repo.FindTrailer(ctx, w.Start, w.Base, key, value)
	if err != nil || found || w.head != w.Start {
		return sha, found, err
	}
	kept, parent, ok, err := w.store.repo.KeptRef(ctx, w.keptRef())
	if err != nil || !ok || parent != w.Start {
		return "", false, err
	}
	if _, found, err := w.store.repo.FindTrailer(ctx, kept, w.Start, key, value); err != nil || !found {
		return "", false, err
	}
	tree, err := w.store.repo.TreeOf(ctx, kept)
	if err != nil {
		return "", false, err
	}
	if _, err := w.check(ctx, tree); err != nil {
		return "", false, nil // not what this run would push (its protected paths, say): the step is done again
	}
	w.head, w.built, w.tree = kept, kept, tree
	return kept, true, nil
}

// keptRef is where ralph's own repository keeps the last commit it built for issue (never pushed as such).
func keptRef(issue int) string { return "refs/ralph-kept/" + strconv.Itoa(issue) }

// keptRef is where ralph's repository keeps the last commit it built on this workspace's branch.
func (w *Workspace) keptRef() string {
	if w.kept != "" {
		return w.kept
	}
	return keptRef(w.issue)
}

// Diff is the branch's change against the base, as pushed.
func (w *Workspace) Diff(ctx context.Context) (string, error) {
	return w.store.repo.Diff(ctx, w.Base, w.head)
}

// CommitDocument commits one document that ralph has read and checked (content), on top of the branch, as
// a blob ralph writes itself: nothing else of the agent's copy goes into the commit.
func (w *Workspace) CommitDocument(ctx context.Context, rel string, content []byte, msg string, author git.Signature) (string, error) {
	r := w.store.repo
	if err := r.ReadTree(ctx, w.index, w.head); err != nil {
		return "", err
	}
	if err := r.AddBlob(ctx, w.index, rel, content); err != nil {
		return "", err
	}
	tree, err := r.WriteTree(ctx, w.index)
	if err != nil {
		return "", err
	}
	if _, err := w.check(ctx, tree); err != nil {
		return "", err
	}
	return w.commit(ctx, tree, msg, author)
}

// Commit commits the tree the last Collect checked.
func (w *Workspace) Commit(ctx context.Context, msg string, author git.Signature) (string, error) {
	if w.tree == "" {
		return "", errors.New("commit: nothing was collected")
	}
	return w.commit(ctx, w.tree, msg, author)
}

func (w *Workspace) commit(ctx context.Context, tree, msg string, author git.Signature) (string, error) {
	sha, err := w.store.repo.CommitTree(ctx, tree, w.head, msg, author)
	if err != nil {
		return "", err
	}
	w.head, w.built = sha, sha
	// Kept before it is pushed: a push that fails leaves it for the next run (FindStep).
	if err := w.store.repo.KeepRef(ctx, w.keptRef(), sha); err != nil {
		return "", err
	}
	return sha, nil
}

// Built is the commit ralph built in this step and has not pushed yet ("" when there is none).
func (w *Workspace) Built() string {
	if w.built == w.RemoteOld {
		return ""
	}
	return w.built
}

// Pushed is the commit ralph built and pushed in this step ("" when it pushed none).
func (w *Workspace) Pushed() string {
	if w.built != "" && w.built == w.RemoteOld {
		return w.built
	}
	return ""
}

// Push pushes the commit ralph built, if the branch is still where the step found it.
func (w *Workspace) Push(ctx context.Context) error {
	if w.built == "" || w.built == w.RemoteOld {
		return nil
	}
	if w.store.opts.Publisher != nil {
		if err := w.publish(ctx); err != nil {
			return err
		}
	} else if err := w.store.repo.Push(ctx, w.built, w.Branch, w.RemoteOld); err != nil {
		return err
	}
	w.RemoteOld = w.built
	return nil
}

// removeAll removes a tree even where an agent took away its own write permission.
func removeAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, werr error) error {
		if werr == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// chownTree gives every file under dir to uid:gid without following symlinks.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// Clear removes any file at rel in the agent's copy (an earlier iteration's document must not pass for
// this one's) and makes its directories, the agent's own, so the agent can write the document there.
func (w *Workspace) Clear(rel string) error {
	abs := filepath.Join(w.Dir, filepath.FromSlash(rel))
	if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(abs)
	var made []string
	for d := dir; d != w.Dir && len(d) > len(w.Dir); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if o := w.store.opts.Owner; o.UID != 0 {
		for _, d := range made {
			if err := os.Lchown(d, o.UID, o.GID); err != nil {
				return err
			}
		}
	}
	return nil
}
