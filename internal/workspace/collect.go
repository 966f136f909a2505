package workspace

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// RefusedError is a change ralph will not commit: each entry names a path and why.
type RefusedError struct {
	Paths []string
}

func (e *RefusedError) Error() string {
	return "the change touches paths ralph may not change: " + strings.Join(e.Paths, ", ")
}

// Collect records the agent's copy in ralph's own index and checks the resulting tree against the
// branch. It reads the copy as data, in Go (see walk.go): no git and no other program runs over it, and
// nothing in it (a .git at any depth, config, attributes, hooks, a submodule's repository) is honoured. It
// returns what changed; a *RefusedError says what may not be committed. Every process of the agent must be
// gone before it is called, so that what is checked is what is committed.
func (w *Workspace) Collect(ctx context.Context) ([]git.Change, error) {
	r := w.store.repo
	base, err := r.Entries(ctx, w.head)
	if err != nil {
		return nil, err
	}
	c := newCollector(ctx, w, base)
	if err := c.collect(); err != nil {
		return nil, err
	}
	if len(c.refused) > 0 {
		return nil, &RefusedError{Paths: c.refused}
	}
	if err := r.WriteBlobs(ctx, c.blobs); err != nil {
		return nil, err
	}
	if err := r.ReadTree(ctx, w.index, w.head); err != nil {
		return nil, err
	}
	if err := r.UpdateIndex(ctx, w.index, c.entries); err != nil {
		return nil, err
	}
	tree, err := r.WriteTree(ctx, w.index)
	if err != nil {
		return nil, err
	}
	changes, err := w.check(ctx, tree)
	if err != nil {
		return nil, err
	}
	w.tree = tree
	return changes, nil
}

// check refuses a tree that changes, against the commit the step builds on, a protected path in any way
// (added, modified, deleted, renamed away, mode changed), any gitlink, a file over the size limits, or that
// holds a symlink which is absolute or resolves outside the repository. It returns the tree's changes.
func (w *Workspace) check(ctx context.Context, tree string) ([]git.Change, error) {
	r := w.store.repo
	lim := w.store.opts.Limits
	changes, err := r.Changes(ctx, w.head, tree)
	if err != nil {
		return nil, err
	}
	entries, err := r.Entries(ctx, tree)
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]git.Entry, len(entries))
	for _, e := range entries {
		byPath[e.Path] = e
	}
	var refused []string
	var total int64
	changed := map[string]bool{}
	for _, c := range changes {
		changed[c.Path] = true
		if why := w.store.opts.Protected(c.Path); why != "" {
			refused = append(refused, fmt.Sprintf("`%s` (%s: %s)", c.Path, why, verb(c)))
			continue
		}
		if c.OldMode == "160000" || c.NewMode == "160000" {
			refused = append(refused, fmt.Sprintf("`%s` (a submodule: ralph does not change gitlinks)", c.Path))
			continue
		}
		if c.Status == "D" {
			continue
		}
		if e, ok := byPath[c.Path]; ok && e.Size > 0 {
			if e.Size > lim.File {
				refused = append(refused, fmt.Sprintf("`%s` (%d bytes, more than the limit of %d)", c.Path, e.Size, lim.File))
			}
			total += e.Size
		}
	}
	if total > lim.Total {
		refused = append(refused, fmt.Sprintf("the change adds %d bytes, more than the limit of %d", total, lim.Total))
	}
	bad, err := w.escapingLinks(ctx, byPath, changed)
	if err != nil {
		return nil, err
	}
	refused = append(refused, bad...)
	if len(refused) > 0 {
		return nil, &RefusedError{Paths: refused}
	}
	return changes, nil
}

func verb(c git.Change) string {
	switch {
	case c.Status == "A":
		return "added"
	case c.Status == "D":
		return "deleted or renamed away"
	case c.Status == "T" || c.OldMode != c.NewMode:
		return "mode or type changed"
	}
	return "modified"
}

// escapingLinks resolves every symlink of the tree through the tree itself (a chain of relative links
// included) and names those that are absolute or end outside the repository. A link the step did not touch
// that escaped already before the step is left alone: it is not the agent's doing.
func (w *Workspace) escapingLinks(ctx context.Context, byPath map[string]git.Entry, changed map[string]bool) ([]string, error) {
	r := w.store.repo
	targets := map[string]string{}
	target := func(sha string) (string, error) {
		if t, ok := targets[sha]; ok {
			return t, nil
		}
		b, err := r.Blob(ctx, sha, 4096)
		if err != nil {
			return "", err
		}
		targets[sha] = string(b)
		return string(b), nil
	}
	var links []string
	for p, e := range byPath {
		if e.Mode == "120000" {
			links = append(links, p)
		}
	}
	sort.Strings(links)
	var bad []string
	var before map[string]git.Entry
	for _, p := range links {
		esc, err := escapes(p, byPath, target)
		if err != nil {
			return nil, err
		}
		if !esc {
			continue
		}
		if !changed[p] {
			if before == nil {
				entries, err := r.Entries(ctx, w.head)
				if err != nil {
					return nil, err
				}
				before = map[string]git.Entry{}
				for _, e := range entries {
					before[e.Path] = e
				}
			}
			if old, err := escapes(p, before, target); err != nil {
				return nil, err
			} else if old {
				continue
			}
		}
		t, _ := target(byPath[p].SHA)
		bad = append(bad, fmt.Sprintf("`%s` (a symlink to `%s`, which resolves outside the repository)", p, t))
	}
	return bad, nil
}

// maxHops bounds a chain of links, as the kernel does (40).
const maxHops = 40

// escapes resolves the link at p within the tree: true when it is absolute, climbs above the root, or
// loops.
func escapes(p string, tree map[string]git.Entry, target func(sha string) (string, error)) (bool, error) {
	e, ok := tree[p]
	if !ok || e.Mode != "120000" {
		return false, nil
	}
	stack := split(path.Dir(p))
	t, err := target(e.SHA)
	if err != nil {
		return false, err
	}
	if strings.HasPrefix(t, "/") {
		return true, nil
	}
	queue := split(t)
	hops := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return true, nil
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, c)
		next, ok := tree[strings.Join(stack, "/")]
		if !ok || next.Mode != "120000" {
			continue
		}
		if hops++; hops > maxHops {
			return true, nil
		}
		t, err := target(next.SHA)
		if err != nil {
			return false, err
		}
		if strings.HasPrefix(t, "/") {
			return true, nil
		}
		stack = stack[:len(stack)-1]
		queue = append(split(t), queue...)
	}
	return false, nil
}

func split(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
