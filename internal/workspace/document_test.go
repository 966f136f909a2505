package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDocument: only a regular file, reached without a symlink, within the limit, is read; nothing the
// agent leaves makes the read block or take unbounded memory.
func TestDocument(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Owner{})
	w := f.prepare(t, 10, "ralph/issue-10")
	dir := w.Dir
	outside := filepath.Join(f.root, "outside")
	writeFile(t, filepath.Join(outside, "plan.md"), "outside\n")
	writeFile(t, filepath.Join(dir, "docs", "plan.md"), "the plan\n")
	writeFile(t, filepath.Join(dir, "docs", "limit.md"), strings.Repeat("x", int(testLimits.Document)))
	writeFile(t, filepath.Join(dir, "docs", "over.md"), strings.Repeat("x", int(testLimits.Document)+1))
	if err := syscall.Mkfifo(filepath.Join(dir, "docs", "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/dev/zero", filepath.Join(dir, "docs", "zero.md"))
	symlink(t, "plan.md", filepath.Join(dir, "docs", "link.md"))
	symlink(t, outside, filepath.Join(dir, "linked"))
	symlink(t, "docs", filepath.Join(dir, "alias"))
	mkdir(t, filepath.Join(dir, "docs", "dir.md"))

	tests := []struct {
		name    string
		rel     string
		want    string
		wantErr error // ErrNoDocument, or a *DocumentError when docErr
		docErr  bool
	}{
		{"a regular file", "docs/plan.md", "the plan\n", nil, false},
		{"exactly the limit", "docs/limit.md", strings.Repeat("x", int(testLimits.Document)), nil, false},
		{"missing", "docs/none.md", "", ErrNoDocument, false},
		{"missing directory", "nowhere/plan.md", "", ErrNoDocument, false},
		{"over the limit", "docs/over.md", "", nil, true},
		{"a FIFO", "docs/fifo.md", "", nil, true},
		{"a symlink to /dev/zero", "docs/zero.md", "", nil, true},
		{"a symlink inside", "docs/link.md", "", nil, true},
		{"a symlinked directory outside", "linked/plan.md", "", nil, true},
		{"a symlinked directory inside", "alias/plan.md", "", nil, true},
		{"a directory", "docs/dir.md", "", nil, true},
		{"climbing out", "../outside/plan.md", "", nil, true},
		{"absolute", outside + "/plan.md", "", nil, true},
	}
	for _, tt := range tests {
		done := make(chan struct{})
		var got []byte
		var err error
		go func() {
			defer close(done)
			got, err = w.Document(tt.rel)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Document blocks", tt.name)
		}
		var de *DocumentError
		switch {
		case tt.docErr:
			if !errors.As(err, &de) || got != nil {
				t.Errorf("%s: Document = %q, %v; want a *DocumentError", tt.name, got, err)
			}
		case tt.wantErr != nil:
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: Document = %q, %v; want %v", tt.name, got, err, tt.wantErr)
			}
		case err != nil || string(got) != tt.want:
			t.Errorf("%s: Document = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}

	// readRegular refuses a root that is itself a symlink.
	if _, err := readRegular(filepath.Join(dir, "linked"), "plan.md", 100, 0); !errors.As(err, new(*DocumentError)) {
		t.Errorf("readRegular through a symlinked root = %v, want a *DocumentError", err)
	}
}

// TestDocumentHugeFile: a 2 GiB (sparse) document is refused by its size, without reading it. It is not
// parallel, so that the memory it measures is its own.
func TestDocumentHugeFile(t *testing.T) {
	f := newFixture(t, Owner{})
	w := f.prepare(t, 11, "ralph/issue-11")
	huge := filepath.Join(w.Dir, "huge.md")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 2<<30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	got, err := w.Document("huge.md")
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	var de *DocumentError
	if !errors.As(err, &de) || got != nil || !strings.Contains(de.Reason, "2147483648 bytes") {
		t.Errorf("Document = %d bytes, %v; want a *DocumentError for its size", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("Document allocated %d bytes to refuse a 2 GiB file", alloc)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Document took %v to refuse a 2 GiB file", elapsed)
	}
}

// TestDocumentNotTheAgents: with a user of its own, a document (in its copy or its TMPDIR) that the agent
// does not own, a hard link to a file of ralph's (which the kernel allows where fs.protected_hardlinks is
// 0, and allows for any file the agent may write), is refused before ralph opens it, as Collect refuses
// it: ralph reads as root what its agent could not, and would commit and post it.
func TestDocumentNotTheAgents(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent runs as a user of its own")
	}
	owner := Owner{UID: 61000, GID: 61000}
	f := newFixture(t, owner)
	w := f.prepare(t, 12, "ralph/issue-12")
	secret := filepath.Join(f.root, "token")
	writeFile(t, secret, "ralph's token\n")
	if err := os.Chmod(secret, 0o600); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(w.Dir, "docs"))
	for _, p := range []string{filepath.Join(w.Dir, "docs", "plan.md"), filepath.Join(w.Tmp, "triage.md")} {
		if err := os.Link(secret, p); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(w.Dir, "docs", "mine.md"), "the agent's own\n")
	f.asAgent(t, w)
	if err := os.Lchown(filepath.Join(w.Dir, "docs", "plan.md"), 0, 0); err != nil { // asAgent gave it away
		t.Fatal(err)
	}
	for name, read := range map[string]func() ([]byte, error){
		"Document":     func() ([]byte, error) { return w.Document("docs/plan.md") },
		"TempDocument": func() ([]byte, error) { return w.TempDocument("triage.md") },
	} {
		got, err := read()
		var de *DocumentError
		if !errors.As(err, &de) || got != nil {
			t.Errorf("%s of a hard link to ralph's file = %q, %v; want a *DocumentError", name, got, err)
		}
	}
	if got, err := w.Document("docs/mine.md"); err != nil || string(got) != "the agent's own\n" {
		t.Errorf("Document of the agent's own = %q, %v", got, err)
	}
}
