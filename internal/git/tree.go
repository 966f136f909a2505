package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// noFsync: the agent's copy is thrown away after the step, so waiting for the disk to sync it buys nothing.
var noFsync = []string{"-c", "core.fsync=none"}

// Checkout writes the files of commit into workTree, recording them in index, one of ralph's own index
// files. The work tree gets no .git of ralph's. workTree must be a new, empty directory that no process
// but ralph's has seen: this is the one git ralph runs with a work tree, and it only writes there.
func (r *Repo) Checkout(ctx context.Context, index, workTree, commit string) error {
	if _, err := r.run(ctx, workTree, []string{"GIT_INDEX_FILE=" + index}, append(noFsync, "read-tree", "--reset", "-u", commit)...); err != nil {
		return fmt.Errorf("checking out %s: %w", short(commit), err)
	}
	return nil
}

// ReadTree sets index to commit's tree without touching any file.
func (r *Repo) ReadTree(ctx context.Context, index, commit string) error {
	if _, err := r.run(ctx, "", []string{"GIT_INDEX_FILE=" + index}, "read-tree", commit); err != nil {
		return fmt.Errorf("reading the tree of %s: %w", short(commit), err)
	}
	return nil
}

// BlobID is the id git gives a blob of content (ralph's repository uses SHA-1).
func BlobID(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// WriteBlobs stores blobs in ralph's repository, all in one git fast-import that reads them from its
// standard input: git reads no file and no directory but ralph's own. Their ids are BlobID's.
func (r *Repo) WriteBlobs(ctx context.Context, blobs [][]byte) error {
	if len(blobs) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, b := range blobs {
		fmt.Fprintf(&in, "blob\ndata %d\n", len(b))
		in.Write(b)
		in.WriteByte('\n')
	}
	in.WriteString("done\n")
	// One pack, however few the blobs (git would otherwise start unpack-objects for fewer than 100).
	if _, err := r.runInput(ctx, "", nil, &in, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done"); err != nil {
		return fmt.Errorf("storing the agent's files: %w", err)
	}
	return nil
}

// IndexEntry is one entry UpdateIndex records: Mode "100644", "100755" or "120000" with the blob's id, or
// Mode "0" to remove Path.
type IndexEntry struct {
	Mode, SHA, Path string
}

// UpdateIndex records entries in index (removals first), as git update-index --index-info reads them on
// its standard input: no file is read.
func (r *Repo) UpdateIndex(ctx context.Context, index string, entries []IndexEntry) error {
	if len(entries) == 0 {
		return nil
	}
	zero := strings.Repeat("0", 40)
	var in bytes.Buffer
	for _, remove := range []bool{true, false} {
		for _, e := range entries {
			if (e.Mode == "0") != remove {
				continue
			}
			if strings.ContainsRune(e.Path, 0) {
				return fmt.Errorf("recording %q: a NUL in the path", e.Path)
			}
			sha := e.SHA
			if remove {
				sha = zero
			}
			fmt.Fprintf(&in, "%s %s\t%s\x00", e.Mode, sha, e.Path)
		}
	}
	if _, err := r.runInput(ctx, "", []string{"GIT_INDEX_FILE=" + index}, &in, "update-index", "-z", "--index-info"); err != nil {
		return fmt.Errorf("recording the agent's files: %w", err)
	}
	return nil
}

// AddBlob records content at path in index as a regular file, without reading any file of the agent's:
// the content is what ralph read and checked.
func (r *Repo) AddBlob(ctx context.Context, index, path string, content []byte) error {
	if err := r.WriteBlobs(ctx, [][]byte{content}); err != nil {
		return fmt.Errorf("storing %s: %w", path, err)
	}
	return r.UpdateIndex(ctx, index, []IndexEntry{{Mode: "100644", SHA: BlobID(content), Path: path}})
}

// WriteTree writes index as a tree and returns its id.
func (r *Repo) WriteTree(ctx context.Context, index string) (string, error) {
	out, err := r.run(ctx, "", []string{"GIT_INDEX_FILE=" + index}, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing the tree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CommitTree makes a commit of tree on parent, as author, and returns its id. No ref moves.
func (r *Repo) CommitTree(ctx context.Context, tree, parent, msg string, author Signature) (string, error) {
	args := []string{"commit-tree", tree, "-p", parent, "-m", messageArg(msg)}
	if len(author.Sign) > 0 {
		args = append(args, "-S")
	}
	out, err := r.run(ctx, "", author.env(), args...)
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// messageArg is msg as an argument of git: a message quotes text that is not ralph's (an issue's title, which
// GitHub lets hold a NUL), and no argument can hold a NUL (nor does git take one in a message), so each is
// written U+FFFD. Otherwise such a text would fail every commit that quotes it, the same way each time.
func messageArg(msg string) string {
	return strings.ReplaceAll(msg, "\x00", "\uFFFD")
}

// TreeOf returns the tree of a commit.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	out, err := r.run(ctx, "", nil, "rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("reading the tree of %s: %w", short(commit), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Change is one path whose entry differs between two trees (renames appear as a delete and an add).
type Change struct {
	Path             string
	Status           string // "A", "M", "D" or "T" (type change)
	OldMode, NewMode string // "100644", "100755", "120000" (symlink), "160000" (gitlink), "000000" (absent)
	OldSHA, NewSHA   string
}

// Changes lists what differs between trees (or commits) from and to, entry by entry.
func (r *Repo) Changes(ctx context.Context, from, to string) ([]Change, error) {
	out, err := r.run(ctx, "", nil, "diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", "--no-textconv", from, to, "--")
	if err != nil {
		return nil, fmt.Errorf("comparing trees: %w", err)
	}
	return parseRaw(out)
}

// parseRaw parses `git diff-tree --raw -z --no-renames` output:
// ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0".
func parseRaw(out []byte) ([]Change, error) {
	s := strings.TrimSuffix(string(out), "\x00")
	if s == "" {
		return nil, nil
	}
	fields := strings.Split(s, "\x00")
	var changes []Change
	for i := 0; i < len(fields); i++ {
		head := fields[i]
		meta := strings.Fields(strings.TrimPrefix(head, ":"))
		if !strings.HasPrefix(head, ":") || len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("unexpected diff output %q", head)
		}
		if i+1 >= len(fields) {
			return nil, fmt.Errorf("diff output ends after %q", head)
		}
		i++
		changes = append(changes, Change{Path: fields[i], Status: meta[4][:1], OldMode: meta[0], NewMode: meta[1], OldSHA: meta[2], NewSHA: meta[3]})
	}
	return changes, nil
}

// Entry is one entry of a tree, listed recursively.
type Entry struct {
	Path string
	Mode string
	SHA  string
	Size int64 // -1 for a gitlink
}

// Entries lists every blob and gitlink of a tree, with sizes.
func (r *Repo) Entries(ctx context.Context, tree string) ([]Entry, error) {
	out, err := r.run(ctx, "", nil, "ls-tree", "-r", "-z", "-l", "--full-tree", tree)
	if err != nil {
		return nil, fmt.Errorf("listing the tree: %w", err)
	}
	var entries []Entry
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("unexpected ls-tree output %q", rec)
		}
		size := int64(-1)
		if f[3] != "-" {
			if size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("unexpected ls-tree size %q", rec)
			}
		}
		entries = append(entries, Entry{Path: path, Mode: f[0], SHA: f[2], Size: size})
	}
	return entries, nil
}

// Blob returns a blob's content, refusing one larger than max bytes.
func (r *Repo) Blob(ctx context.Context, sha string, max int64) ([]byte, error) {
	out, err := r.run(ctx, "", nil, "cat-file", "-s", sha)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", short(sha), err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", short(sha), err)
	}
	if n > max {
		return nil, fmt.Errorf("blob %s is %d bytes, more than %d", short(sha), n, max)
	}
	b, err := r.run(ctx, "", nil, "cat-file", "blob", sha)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", short(sha), err)
	}
	return b, nil
}

// File returns the content of path at commit; found is false when the commit has no such file.
func (r *Repo) File(ctx context.Context, commit, path string, max int64) (content []byte, found bool, err error) {
	out, err := r.run(ctx, "", nil, "rev-parse", "--verify", "--quiet", commit+":"+path)
	if err != nil {
		return nil, false, nil
	}
	b, err := r.Blob(ctx, strings.TrimSpace(string(out)), max)
	return b, err == nil, err
}

// FindTrailer finds the newest commit reachable from head but not from base whose message has the trailer
// line "key: value" (value "": any value); found is false when there is none.
func (r *Repo) FindTrailer(ctx context.Context, head, base, key, value string) (sha string, found bool, err error) {
	if head == base {
		return "", false, nil
	}
	// Each commit ends with a NUL (-z), its id on the first line: a message quotes titles that are not
	// ralph's, which may hold any character but the one no message given as an argument can hold.
	out, err := r.run(ctx, "", nil, "log", "-z", "--format=%H%n%B", head, "--not", base, "--")
	if err != nil {
		return "", false, fmt.Errorf("git log: %w", err)
	}
	want := key + ": " + value
	for _, rec := range strings.Split(string(out), "\x00") {
		hash, msg, ok := strings.Cut(rec, "\n")
		if !ok || !isSHA(hash) {
			continue
		}
		for _, line := range strings.Split(msg, "\n") {
			line = strings.TrimSpace(line)
			if line == want || (value == "" && strings.HasPrefix(line, key+": ")) {
				return hash, true, nil
			}
		}
	}
	return "", false, nil
}

// Diff returns `git diff base...head`: what head's commits change since they left base.
func (r *Repo) Diff(ctx context.Context, base, head string) (string, error) {
	out, err := r.run(ctx, "", nil, "diff", "--no-color", "--no-ext-diff", "--no-textconv", base+"..."+head, "--")
	if err != nil {
		return "", fmt.Errorf("diff against %s: %w", short(base), err)
	}
	return string(out), nil
}

// InitCopy gives workTree (which Checkout filled from commit with index) a git repository of the
// agent's own: a shallow clone of commit alone, with HEAD detached at commit and index as its index, so
// that `git status`, `git diff` and `git log` work there from the start. It borrows nothing of ralph's (the
// agent's user may not be able to read ralph's objects), and nothing ralph does later reads it.
func (r *Repo) InitCopy(ctx context.Context, workTree, index, commit string) error {
	ref := "refs/heads/ralph-copy-" + filepath.Base(filepath.Dir(workTree))
	if _, err := r.run(ctx, "", nil, "update-ref", ref, commit); err != nil {
		return fmt.Errorf("giving the agent's copy a repository: %w", err)
	}
	defer func() { _, _ = r.run(context.WithoutCancel(ctx), "", nil, "update-ref", "-d", ref) }()
	dot := filepath.Join(workTree, ".git")
	abs, err := filepath.Abs(r.GitDir)
	if err != nil {
		return err
	}
	// A file:// URL: git then speaks its protocol (which knows --depth) instead of copying the directory.
	clone := append(noFsync, "clone", "--quiet", "--bare", "--depth=1", "--no-tags", "--template=",
		"--branch", strings.TrimPrefix(ref, "refs/heads/"), "file://"+abs, dot)
	if _, err := r.run(ctx, "", nil, clone...); err != nil {
		return fmt.Errorf("giving the agent's copy a repository: %w", err)
	}
	// Not bare, and without ralph's repository as a remote: the agent has nothing of ralph's to push to.
	for _, args := range [][]string{{"config", "core.bare", "false"}, {"config", "--remove-section", "remote.origin"}} {
		if _, err := r.run(ctx, "", []string{"GIT_DIR=" + dot}, args...); err != nil {
			return fmt.Errorf("giving the agent's copy a repository: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dot, "HEAD"), []byte(commit+"\n"), 0o644); err != nil {
		return err
	}
	b, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dot, "index"), b, 0o644)
}

func short(sha string) string {
	if len(sha) > 12 && isSHA(sha) {
		return sha[:12]
	}
	return sha
}

// Unpushed lists the commits from base (exclusive) to head, oldest first, along first parents.
func (r *Repo) Unpushed(ctx context.Context, base, head string) ([]string, error) {
	out, err := r.run(ctx, "", nil, "rev-list", "--reverse", "--first-parent", base+".."+head)
	if err != nil {
		return nil, fmt.Errorf("listing the commits after %s: %w", short(base), err)
	}
	return strings.Fields(string(out)), nil
}

// WriteSignedCommit writes the commit whose object is payload (a commit object with no gpgsig header) with
// signature as its gpgsig header, as GitHub stores a commit it signed, and returns its id. No ref moves.
func (r *Repo) WriteSignedCommit(ctx context.Context, payload, signature string) (string, error) {
	head, body, ok := strings.Cut(payload, "\n\n")
	if !ok || !strings.HasPrefix(payload, "tree ") || signature == "" {
		return "", fmt.Errorf("writing a signed commit: the payload is not a commit object")
	}
	sig := strings.ReplaceAll(strings.TrimSuffix(signature, "\n"), "\n", "\n ")
	obj := head + "\ngpgsig " + sig + "\n\n" + body
	out, err := r.runInput(ctx, "", nil, strings.NewReader(obj), "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		return "", fmt.Errorf("writing a signed commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
