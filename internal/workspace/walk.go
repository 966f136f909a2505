package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// How ralph reads the agent's copy: as data, in this process. It walks the directories by file
// descriptor (openat with O_NOFOLLOW: no link is ever followed, and no directory swapped for a link leads
// anywhere else), looks at each entry with lstat, and opens a file it must read without following links
// and without blocking, reading no more than the size lstat gave. The content it read is the content it
// stores, through git's standard input: git never reads the copy.
//
// What counts:
//   - regular files (the executable bit kept) and symlinks (their target, as readlink gives it);
//   - any entry named .git (in any case: git refuses such a path) is never honoured: at the top it is the
//     agent's own repository and is left out; anywhere below, it is refused (a nested repository would
//     be a submodule, which ralph does not commit), unless an ignored directory holds it;
//   - a submodule of the base tree (a gitlink) stays as it was: ralph never looks inside its directory.
//     A gitlink replaced by anything else than a directory is a change the check refuses;
//   - untracked paths that the repository's .gitignore files ignore are left out, as git add --all
//     leaves them (only .gitignore files count: regular files, read up to maxIgnoreFile); a tracked file
//     is recorded whether ignored or not, and a tracked path that is gone is recorded as deleted;
//   - a FIFO, socket or device is left out when untracked, as git leaves it; at a tracked path, refused.
//
// Limits bound the work: entries read (Limits.Files), directory depth (maxDepth), each file's size
// (Limits.File, before it is opened), the bytes the change adds (Limits.Total) and the bytes read in all.

// maxDepth bounds how deep ralph walks directories (each level holds a descriptor open).
const maxDepth = 256

// maxIgnoreFile bounds a .gitignore file ralph reads.
const maxIgnoreFile = 1 << 20

// maxLink bounds a symlink's target (Linux's own limit is PATH_MAX, 4096).
const maxLink = 4096

// stamp is what lstat says of an entry. ralph takes one of every file it writes into the copy and then
// waits until the clock has moved past their change times (see remember): any later change to a file (its
// content, its mode, a rename over it) gives it a later change time, which no unprivileged process can
// set back. A file whose stamp is unchanged still holds what ralph wrote.
type stamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime unix.Timespec
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{dev: uint64(st.Dev), ino: st.Ino, mode: uint32(st.Mode), size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// known is a file ralph wrote into the copy: its stamp then, and its entry in the tree it came from.
type known struct {
	stamp stamp
	entry git.Entry
}

// remember takes the stamps of the files of tree that ralph wrote into the copy, and waits until a file
// written now gets a later change time than any of them. When the clock does not move (a file system
// with coarse times), nothing is remembered, and Collect reads every file.
func (w *Workspace) remember(ctx context.Context, tree string) error {
	entries, err := w.store.repo.Entries(ctx, tree)
	if err != nil {
		return err
	}
	w.known = map[string]known{}
	var latest unix.Timespec
	for _, e := range entries {
		want := uint32(unix.S_IFREG)
		switch e.Mode {
		case "120000":
			want = unix.S_IFLNK
		case "100644", "100755":
		default:
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(w.Dir, filepath.FromSlash(e.Path)), &st); err != nil || uint32(st.Mode)&unix.S_IFMT != want {
			continue
		}
		w.known[e.Path] = known{stamp: stampOf(&st), entry: e}
		if later(st.Ctim, latest) {
			latest = st.Ctim
		}
	}
	if !settle(w.area, latest) {
		w.known = nil
	}
	return nil
}

func later(a, b unix.Timespec) bool {
	return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec
}

// settle waits (up to a few seconds) until a file written in dir, ralph's own directory on the copy's
// file system, gets a change time later than latest.
func settle(dir string, latest unix.Timespec) bool {
	f, err := os.CreateTemp(dir, ".clock-")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var st unix.Stat_t
		if _, err := f.Write([]byte{0}); err != nil {
			return false
		}
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return false
		}
		if later(st.Ctim, latest) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// collector is one reading of the agent's copy against the base tree (the commit the step builds on).
type collector struct {
	ctx    context.Context // a cancelled run stops the walk
	w      *Workspace
	lim    Limits
	base   map[string]git.Entry
	dirs   map[string]bool // directories that hold a path of the base
	budget int64           // bytes ralph reads at most: the base's files, rewritten, and the limit of a change

	count   int
	tests   int64 // tests of an ignore pattern made so far (Limits.IgnoreTests)
	over    bool  // the budget is spent: the change is over its limit
	read    int64
	added   int64
	seen    map[string]bool
	stored  map[string]bool
	entries []git.IndexEntry
	blobs   [][]byte
	refused []string
}

func newCollector(ctx context.Context, w *Workspace, base []git.Entry) *collector {
	c := &collector{
		ctx: ctx, w: w, lim: w.store.opts.Limits, base: map[string]git.Entry{}, dirs: map[string]bool{},
		seen: map[string]bool{}, stored: map[string]bool{},
	}
	c.budget = c.lim.Total
	for _, e := range base {
		c.base[e.Path] = e
		if e.Size > 0 {
			c.budget += e.Size
		}
		for d := pathDir(e.Path); d != ""; d = pathDir(d) {
			if c.dirs[d] {
				break
			}
			c.dirs[d] = true
		}
	}
	return c
}

func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (c *collector) refuse(p, why string) {
	c.refused = append(c.refused, fmt.Sprintf("`%s` (%s)", p, why))
}

// errStop ends the walk once a limit is crossed: what was refused says why.
var errStop = errors.New("stop")

// collect walks the copy and works out the index entries that make the base tree the copy's.
func (c *collector) collect() error {
	fd, err := unix.Open(c.w.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		c.refused = append(c.refused, "the agent's copy is no longer a directory")
		return nil
	}
	if err := c.walk(fd, "", nil, false, 0); err != nil {
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	if c.added > c.lim.Total || c.over {
		c.refused = append(c.refused, fmt.Sprintf("the change adds %d bytes, more than the limit of %d", c.added, c.lim.Total))
	}
	var gone []string
	for p := range c.base {
		if !c.seen[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		c.entries = append(c.entries, git.IndexEntry{Mode: "0", Path: p})
	}
	return nil
}

// walk reads the directory fd (which it closes) at rel ("" the top), whose ignore patterns so far are
// patterns; ignored says the directory itself is ignored (it is walked only for the tracked paths in it).
func (c *collector) walk(fd int, rel string, patterns []gitignore.Pattern, ignored bool, depth int) error {
	dir := os.NewFile(uintptr(fd), rel)
	defer dir.Close()
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("reading the agent's copy: %w", err)
	}
	var names []string
	for {
		batch, err := dir.ReadDir(1024)
		for _, d := range batch {
			if c.count++; c.count > c.lim.Files {
				c.refused = append(c.refused, fmt.Sprintf("the agent's copy holds more than the limit of %d files and directories", c.lim.Files))
				return errStop
			}
			names = append(names, d.Name())
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the agent's copy (%s): %w", rel, err)
		}
	}
	sort.Strings(names)
	if !ignored {
		patterns = c.ignoreFile(fd, rel, patterns)
	}
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if strings.EqualFold(name, ".git") {
			if rel != "" && !ignored {
				c.refuse(p, "a repository inside the copy: ralph neither reads nor commits one")
			}
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("reading the agent's copy (%s): %w", p, err)
		}
		be, tracked := c.base[p]
		typ := uint32(st.Mode) & unix.S_IFMT
		if tracked && be.Mode == "160000" && typ == unix.S_IFDIR {
			c.seen[p] = true // a submodule stays as it was; what its directory holds is not ralph's to read
			continue
		}
		if c.tests > c.lim.IgnoreTests {
			c.refused = append(c.refused, fmt.Sprintf("the copy's .gitignore files make ralph test more than %d ignore patterns in all (%d in effect at `%s`): make them fewer", c.lim.IgnoreTests, len(patterns), rel))
			return errStop
		}
		isIgnored := func() bool {
			if ignored {
				return true
			}
			c.tests += int64(len(patterns))
			return gitignore.NewMatcher(patterns).Match(strings.Split(p, "/"), typ == unix.S_IFDIR)
		}
		switch typ {
		case unix.S_IFDIR:
			ign := isIgnored()
			if ign && !c.dirs[p] {
				continue
			}
			if depth+1 > maxDepth {
				c.refuse(p, fmt.Sprintf("deeper than %d directories", maxDepth))
				return errStop
			}
			sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				c.refuse(p, "a directory ralph cannot read: "+err.Error())
				continue
			}
			if err := c.walk(sub, p, patterns, ign, depth+1); err != nil {
				return err
			}
		case unix.S_IFREG:
			if !tracked && isIgnored() {
				continue
			}
			if err := c.file(fd, name, p, &st); err != nil {
				return err
			}
		case unix.S_IFLNK:
			if !tracked && isIgnored() {
				continue
			}
			c.link(fd, name, p, &st)
		default:
			if tracked {
				c.refuse(p, kind(modeType(typ))+": ralph commits only files, symlinks and directories")
			}
		}
	}
	return nil
}

func modeType(typ uint32) os.FileMode {
	switch typ {
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return os.ModeIrregular
}

// ignoreFile adds the patterns of the .gitignore in the directory fd (at rel), when it is a regular file.
func (c *collector) ignoreFile(fd int, rel string, patterns []gitignore.Pattern) []gitignore.Pattern {
	p := ".gitignore"
	if rel != "" {
		p = rel + "/.gitignore"
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, ".gitignore", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return patterns
	}
	if st.Size > maxIgnoreFile {
		c.refuse(p, fmt.Sprintf("a .gitignore of %d bytes, more than ralph reads (%d)", st.Size, maxIgnoreFile))
		return patterns
	}
	b, why := readAt(fd, ".gitignore", &st)
	if why != "" {
		c.refuse(p, why)
		return patterns
	}
	var domain []string
	if rel != "" {
		domain = strings.Split(rel, "/")
	}
	patterns = patterns[:len(patterns):len(patterns)]
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, domain))
	}
	return patterns
}

// readAt reads the regular file name in the directory fd, which lstat described as st, without following
// a link and without blocking; why says why it was not read.
func readAt(fd int, name string, st *unix.Stat_t) (content []byte, why string) {
	ffd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "cannot be opened: " + err.Error()
	}
	f := os.NewFile(uintptr(ffd), name)
	defer f.Close()
	var now unix.Stat_t
	if err := unix.Fstat(ffd, &now); err != nil {
		return nil, "cannot be read: " + err.Error()
	}
	if stampOf(&now) != stampOf(st) {
		return nil, "changed while ralph read it"
	}
	b, err := io.ReadAll(io.LimitReader(f, st.Size+1))
	if err != nil {
		return nil, "cannot be read: " + err.Error()
	}
	if int64(len(b)) != st.Size {
		return nil, "changed while ralph read it"
	}
	return b, ""
}

// file records the regular file name (at p) of the directory fd.
func (c *collector) file(fd int, name, p string, st *unix.Stat_t) error {
	mode := "100644"
	if st.Mode&0o100 != 0 {
		mode = "100755"
	}
	if k, ok := c.w.known[p]; ok && k.stamp == stampOf(st) {
		c.record(p, k.entry.Mode, k.entry.SHA, st.Size, nil)
		return nil
	}
	if max := c.lim.File; st.Size > max {
		c.refuse(p, fmt.Sprintf("%d bytes, more than the limit of %d", st.Size, max))
		return nil
	}
	if o := c.w.store.opts.Owner; o.UID != 0 && int(st.Uid) != o.UID {
		c.refuse(p, "a file the agent does not own (a hard link?)")
		return nil
	}
	if c.read+st.Size > c.budget {
		// Only a change over its limit makes ralph read this much (all of the base again, and the limit):
		// what is left is counted, not read.
		c.over = true
		c.seen[p] = true
		c.added += st.Size
		return nil
	}
	c.read += st.Size
	b, why := readAt(fd, name, st)
	if why != "" {
		c.refuse(p, why)
		return nil
	}
	c.record(p, mode, git.BlobID(b), st.Size, b)
	return nil
}

// link records the symlink name (at p) of the directory fd: its target, as it is.
func (c *collector) link(fd int, name, p string, st *unix.Stat_t) {
	if k, ok := c.w.known[p]; ok && k.stamp == stampOf(st) {
		c.record(p, k.entry.Mode, k.entry.SHA, st.Size, nil)
		return
	}
	buf := make([]byte, maxLink+1)
	n, err := unix.Readlinkat(fd, name, buf)
	if err != nil {
		c.refuse(p, "a symlink ralph cannot read: "+err.Error())
		return
	}
	if n > maxLink {
		c.refuse(p, fmt.Sprintf("a symlink whose target is longer than %d bytes", maxLink))
		return
	}
	target := buf[:n]
	c.record(p, "120000", git.BlobID(target), int64(n), target)
}

// record notes that the copy has an entry at p: a change when it differs from the base's, whose content
// (when ralph read it) is stored unless the change is already over its limit.
func (c *collector) record(p, mode, sha string, size int64, content []byte) {
	c.seen[p] = true
	be, tracked := c.base[p]
	if tracked && be.Mode == mode && be.SHA == sha {
		return
	}
	c.entries = append(c.entries, git.IndexEntry{Mode: mode, SHA: sha, Path: p})
	if tracked && be.SHA == sha {
		return // a mode changed
	}
	c.added += size
	if content != nil && c.added <= c.lim.Total && !c.stored[sha] {
		c.stored[sha] = true
		c.blobs = append(c.blobs, content)
	}
}
