package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// BenchmarkStep measures what the boundary's git side costs one step of ralph, apart from the agent: make
// the agent's copy of a branch (fetch, checkout, the copy's own shallow repository), read back its change
// as files into ralph's own index, check the tree, commit, and remove the copy. The repositories have 20
// and 2,000 files of 4 KiB (8 MiB, a mid-sized project). It reports the copy's disk use beside the time.
//
//	go test ./internal/workspace -run '^$' -bench Step -benchtime 20x
func BenchmarkStep(b *testing.B) {
	for _, files := range []int{20, 2000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) { benchmarkStep(b, files, Owner{}) })
		if os.Geteuid() == 0 {
			// As in the Action: the copy is given to the agent's own user.
			b.Run(fmt.Sprintf("files=%d/own-user", files), func(b *testing.B) { benchmarkStep(b, files, Owner{UID: 61999, GID: 61999}) })
		}
	}
}

// BenchmarkCollect measures Collect alone: reading back a change of one new file from the agent's copy of
// a repository of 20 or 2,000 files into ralph's own index, and checking the tree.
//
//	go test ./internal/workspace -run '^$' -bench Collect -benchtime 20x
func BenchmarkCollect(b *testing.B) {
	for _, files := range []int{20, 2000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) { benchmarkCollect(b, files, Owner{}) })
		if os.Geteuid() == 0 {
			b.Run(fmt.Sprintf("files=%d/own-user", files), func(b *testing.B) { benchmarkCollect(b, files, Owner{UID: 61999, GID: 61999}) })
		}
	}
}

func benchmarkCollect(b *testing.B, files int, owner Owner) {
	ctx := context.Background()
	store := benchStore(b, files, owner)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w, err := store.Prepare(ctx, 1, "ralph/1-bench", "main")
		if err != nil {
			b.Fatal(err)
		}
		newFile(b, w, owner)
		b.StartTimer()
		if _, err := w.Collect(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// newFile is the agent's change: one new file, its own.
func newFile(b *testing.B, w *Workspace, owner Owner) {
	if err := os.WriteFile(filepath.Join(w.Dir, "dir00", "new.txt"), []byte("phase\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if owner.UID != 0 {
		if err := os.Chown(filepath.Join(w.Dir, "dir00", "new.txt"), owner.UID, owner.GID); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkStep(b *testing.B, files int, owner Owner) {
	ctx := context.Background()
	store := benchStore(b, files, owner)
	var disk int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := store.Prepare(ctx, 1, "ralph/1-bench", "main")
		if err != nil {
			b.Fatal(err)
		}
		disk = du(w.area)
		newFile(b, w, owner)
		if _, err := w.Collect(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Commit(ctx, "phase", git.Signature{Name: "ralph", Email: "r@r"}); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(disk)/(1<<20), "MiB-copy")
}

// benchStore is ralph's repository for a checkout of files files of 4 KiB in 40 directories.
func benchStore(b *testing.B, files int, owner Owner) *Store {
	ctx := context.Background()
	root := b.TempDir()
	origin := filepath.Join(root, "origin.git")
	seed := filepath.Join(root, "seed")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(root, "init", "-q", "--bare", "--initial-branch=main", origin)
	run(root, "init", "-q", "--initial-branch=main", seed)
	content := make([]byte, 4096)
	for i := range content {
		content[i] = byte('a' + i%26)
	}
	for i := 0; i < files; i++ {
		p := filepath.Join(seed, fmt.Sprintf("dir%02d", i%40), fmt.Sprintf("file%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, append([]byte(fmt.Sprint(i)), content...), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run(seed, "add", "-A")
	run(seed, "commit", "-q", "-m", "seed")
	run(seed, "push", "-q", origin, "HEAD:refs/heads/main")
	run(seed, "remote", "add", "origin", origin)

	store, err := Open(ctx, Options{GitDir: filepath.Join(root, "ralph.git"), Agents: filepath.Join(root, "agents"), Source: seed, Runner: git.ExecRunner{}, Owner: owner})
	if err != nil {
		b.Fatal(err)
	}
	return store
}

func du(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
