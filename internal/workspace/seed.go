package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrSeedTooLarge says a seed's regular files are larger than the limit SeedHome was given; nothing was
// copied.
var ErrSeedTooLarge = errors.New("larger than the limit")

// SeedHome copies the directories and regular files under src (never a symlink, a device or a pipe, nor
// anything through one) into rel under the agent's HOME, given to the agent's uid as the rest of its area
// is, and returns how many bytes it copied. rel must not exist yet. A src that is not a directory copies
// nothing. When src's regular files come to more than limit bytes, it copies nothing and returns
// ErrSeedTooLarge with their size.
func (w *Workspace) SeedHome(rel, src string, limit int64) (int64, error) {
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return 0, nil
	}
	var size int64
	err := filepath.WalkDir(src, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
			if size > limit {
				return ErrSeedTooLarge
			}
		}
		return nil
	})
	if errors.Is(err, ErrSeedTooLarge) {
		return size, fmt.Errorf("%s: more than %d bytes: %w", src, limit, ErrSeedTooLarge)
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", src, err)
	}
	dst := filepath.Join(w.Home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return 0, err
	}
	var copied int64
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(src, p)
		if err != nil || r == "." {
			return err
		}
		to := filepath.Join(dst, r)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o755)
		case d.Type().IsRegular():
			n, err := copyFile(p, to)
			copied += n
			return err
		}
		return nil
	})
	if err != nil {
		return copied, fmt.Errorf("copying %s: %w", src, err)
	}
	if o := w.store.opts.Owner; o.UID != 0 {
		// From HOME down: the directories MkdirAll made are the agent's too.
		if err := chownTree(w.Home, o.UID, o.GID); err != nil {
			return copied, fmt.Errorf("giving the agent its copy of %s: %w", src, err)
		}
	}
	return copied, nil
}

// copyFile copies the regular file from to the new file to, opening neither through a symlink.
func copyFile(from, to string) (int64, error) {
	in, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return 0, err // replaced by something else since the walk: skipped
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
