package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DocumentError is a document the agent left that ralph will not read.
type DocumentError struct {
	Path   string
	Reason string
}

func (e *DocumentError) Error() string { return fmt.Sprintf("the document at %s %s", e.Path, e.Reason) }

// ErrNoDocument: the agent wrote no document at the path.
var ErrNoDocument = errors.New("no document")

// Document reads a document the agent wrote in its copy (rel, slash-separated, inside the copy). Only a
// regular file counts: no FIFO, device, socket or symlink, and no symlinked directory on the way. It is
// opened without following links and without blocking, and read up to the document limit, so a hostile
// file fails the step at once, in bounded memory. With a user of its own, only a file the agent owns
// counts: ralph, root, would otherwise read what the agent hard-linked there and could not read itself.
func (w *Workspace) Document(rel string) ([]byte, error) {
	return readRegular(w.Dir, rel, w.store.opts.Limits.Document, w.store.opts.Owner.UID)
}

// TempDocument reads a document the agent wrote in its TMPDIR (a triage decision, which is not committed)
// the way [Workspace.Document] does.
func (w *Workspace) TempDocument(name string) ([]byte, error) {
	return readRegular(w.Tmp, name, w.store.opts.Limits.Document, w.store.opts.Owner.UID)
}

// readRegular reads rel under root; owner, when not 0, is the uid the file must belong to. The file is
// looked at (lstat) before it is opened, so that ralph opens nothing that is not a regular file of the
// agent's, and what it opened is checked to be what it looked at.
func readRegular(root, rel string, max int64, owner int) ([]byte, error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))), "/")
	for _, p := range parts {
		if p == ".." || p == "" || strings.HasPrefix(rel, "/") {
			return nil, &DocumentError{Path: rel, Reason: "is not a path inside the agent's directory"}
		}
	}
	dirFlags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open(root, dirFlags, 0)
	if err != nil {
		return nil, &DocumentError{Path: rel, Reason: "cannot be read: the agent's directory is not a directory"}
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, dirFlags, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) {
			return nil, ErrNoDocument
		}
		if err != nil {
			return nil, &DocumentError{Path: rel, Reason: "is behind a symlink or something that is not a directory (" + p + ")"}
		}
		fd = next
	}
	name := parts[len(parts)-1]
	var st unix.Stat_t
	err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		unix.Close(fd)
		return nil, ErrNoDocument
	case err != nil:
		unix.Close(fd)
		return nil, &DocumentError{Path: rel, Reason: "cannot be read: " + err.Error()}
	case uint32(st.Mode)&unix.S_IFMT == unix.S_IFLNK:
		unix.Close(fd)
		return nil, &DocumentError{Path: rel, Reason: "is a symlink; ralph reads only a regular file"}
	case uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG:
		unix.Close(fd)
		return nil, &DocumentError{Path: rel, Reason: fmt.Sprintf("is not a regular file (%s)", kind(modeType(uint32(st.Mode)&unix.S_IFMT)))}
	case owner != 0 && int(st.Uid) != owner:
		unix.Close(fd)
		return nil, &DocumentError{Path: rel, Reason: "is a file the agent does not own (a hard link?)"}
	}
	ffd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, ErrNoDocument
	case errors.Is(err, unix.ELOOP):
		return nil, &DocumentError{Path: rel, Reason: "is a symlink; ralph reads only a regular file"}
	case err != nil:
		return nil, &DocumentError{Path: rel, Reason: "cannot be opened: " + err.Error()}
	}
	f := os.NewFile(uintptr(ffd), rel)
	defer f.Close()
	var now unix.Stat_t
	if err := unix.Fstat(ffd, &now); err != nil {
		return nil, &DocumentError{Path: rel, Reason: "cannot be read: " + err.Error()}
	}
	if now.Dev != st.Dev || now.Ino != st.Ino || now.Uid != st.Uid {
		return nil, &DocumentError{Path: rel, Reason: "changed while ralph read it"}
	}
	info, err := f.Stat()
	if err != nil {
		return nil, &DocumentError{Path: rel, Reason: "cannot be read: " + err.Error()}
	}
	if !info.Mode().IsRegular() {
		return nil, &DocumentError{Path: rel, Reason: fmt.Sprintf("is not a regular file (%s)", kind(info.Mode()))}
	}
	if info.Size() > max {
		return nil, &DocumentError{Path: rel, Reason: fmt.Sprintf("is %d bytes, more than the limit of %d", info.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &DocumentError{Path: rel, Reason: "cannot be read: " + err.Error()}
	}
	if int64(len(b)) > max {
		return nil, &DocumentError{Path: rel, Reason: fmt.Sprintf("is more than the limit of %d bytes", max)}
	}
	return b, nil
}

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// Stored is the content of a blob that Collect stored in ralph's own repository: what will be committed,
// read from ralph's objects, not from the agent's copy.
func (w *Workspace) Stored(ctx context.Context, blob string) ([]byte, error) {
	return w.store.repo.Blob(ctx, blob, w.store.opts.Limits.File)
}
