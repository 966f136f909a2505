package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestChangesAndEntries builds, with ralph's own index, a tree that changes every kind of entry against
// the base, and reads it back.
func TestChangesAndEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, f.base); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt, "run.sh"), "echo\n")
	writeFile(t, filepath.Join(wt, "gone.txt"), "bye\n")
	writeFile(t, filepath.Join(wt, "becomes-file"), "target\n")
	writeFile(t, filepath.Join(wt, "with space\tand tab.txt"), "odd\n")
	if err := os.Symlink("README.md", filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	addAll(t, f, index, wt)
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	before, err := r.CommitTree(ctx, tree, f.base, "before", sig)
	if err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(wt, "README.md"), "changed\n")
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt, "link"), "now a file\n")
	writeFile(t, filepath.Join(wt, "new", "deep.txt"), "new\n")
	addAll(t, f, index, wt)
	// A gitlink, as a nested repository would be recorded.
	runGit(t, append(setupEnv(f.home), "GIT_DIR="+r.GitDir, "GIT_INDEX_FILE="+index), "", "update-index", "--add", "--cacheinfo", "160000,"+f.base+",sub")
	tree, err = r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	after, err := r.CommitTree(ctx, tree, before, "after", sig)
	if err != nil {
		t.Fatal(err)
	}

	got, err := r.Changes(ctx, before, after)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "README.md", Status: "M", OldMode: "100644", NewMode: "100644"},
		{Path: "gone.txt", Status: "D", OldMode: "100644", NewMode: "000000"},
		{Path: "link", Status: "T", OldMode: "120000", NewMode: "100644"},
		{Path: "new/deep.txt", Status: "A", OldMode: "000000", NewMode: "100644"},
		{Path: "run.sh", Status: "M", OldMode: "100644", NewMode: "100755"},
		{Path: "sub", Status: "A", OldMode: "000000", NewMode: "160000"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Change{}, "OldSHA", "NewSHA")); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if c.Path == "sub" && c.NewSHA != f.base {
			t.Errorf("gitlink sha = %s, want %s", c.NewSHA, f.base)
		}
		if c.Path == "gone.txt" && c.NewSHA != strings.Repeat("0", 40) {
			t.Errorf("deleted entry's new sha = %s", c.NewSHA)
		}
	}
	if got, err := r.Changes(ctx, after, after); err != nil || len(got) != 0 {
		t.Errorf("Changes of a commit against itself = %v, %v", got, err)
	}

	entries, err := r.Entries(ctx, tree)
	if err != nil {
		t.Fatal(err)
	}
	wantEntries := []Entry{
		{Path: ".gitignore", Mode: "100644", Size: 6},
		{Path: "README.md", Mode: "100644", Size: 8},
		{Path: "becomes-file", Mode: "100644", Size: 7},
		{Path: "link", Mode: "100644", Size: 11},
		{Path: "new/deep.txt", Mode: "100644", Size: 4},
		{Path: "run.sh", Mode: "100755", Size: 5},
		{Path: "sub", Mode: "160000", Size: -1},
		{Path: "with space\tand tab.txt", Mode: "100644", Size: 4},
	}
	if diff := cmp.Diff(wantEntries, entries, cmpopts.IgnoreFields(Entry{}, "SHA")); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	beforeEntries, err := r.Entries(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range beforeEntries {
		if e.Path == "link" {
			if e.Mode != "120000" || e.Size != 9 {
				t.Errorf("symlink entry = %+v", e)
			}
			b, err := r.Blob(ctx, e.SHA, 100)
			if err != nil || string(b) != "README.md" {
				t.Errorf("symlink target = %q, %v", b, err)
			}
		}
	}
}

func TestParseRaw(t *testing.T) {
	t.Parallel()
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	b := strings.Repeat("b", 40)
	tests := []struct {
		name    string
		in      string
		want    []Change
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"modify", ":100644 100644 " + a + " " + b + " M\x00a.txt\x00", []Change{{Path: "a.txt", Status: "M", OldMode: "100644", NewMode: "100644", OldSHA: a, NewSHA: b}}, false},
		{"delete and add", ":100644 000000 " + a + " " + z + " D\x00old\x00:000000 120000 " + z + " " + b + " A\x00new link\x00",
			[]Change{
				{Path: "old", Status: "D", OldMode: "100644", NewMode: "000000", OldSHA: a, NewSHA: z},
				{Path: "new link", Status: "A", OldMode: "000000", NewMode: "120000", OldSHA: z, NewSHA: b},
			}, false},
		{"type change to a gitlink", ":100644 160000 " + a + " " + b + " T\x00sub\x00", []Change{{Path: "sub", Status: "T", OldMode: "100644", NewMode: "160000", OldSHA: a, NewSHA: b}}, false},
		{"path with a newline", ":100644 100755 " + a + " " + a + " M\x00x\ny\x00", []Change{{Path: "x\ny", Status: "M", OldMode: "100644", NewMode: "100755", OldSHA: a, NewSHA: a}}, false},
		{"a path looking like a header", ":100644 100644 " + a + " " + b + " M\x00:100644 100644 x y M\x00", []Change{{Path: ":100644 100644 x y M", Status: "M", OldMode: "100644", NewMode: "100644", OldSHA: a, NewSHA: b}}, false},
		{"no colon", "100644 100644 " + a + " " + b + " M\x00a\x00", nil, true},
		{"missing path", ":100644 100644 " + a + " " + b + " M\x00", nil, true},
		{"short header", ":100644 " + a + " M\x00a\x00", nil, true},
		{"garbage", "garbage", nil, true},
	}
	for _, tt := range tests {
		got, err := parseRaw([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error = %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestFindTrailer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	// main moves on with a commit carrying a trailer; the branch leaves main before it and comes back
	// with a merge-free history of its own.
	onBase := f.commitFile(t, r, f.base, "base.txt", "b\n", "base work\n\nRalph-Step: plan/1")
	c1 := f.commitFile(t, r, f.base, "a.txt", "1\n", "research\n\nRalph-Step: research/1\nCo-authored-by: x")
	c2 := f.commitFile(t, r, c1, "b.txt", "2\n", "implement\n\nRalph-Step: implement/1/1")
	c3 := f.commitFile(t, r, c2, "c.txt", "3\n", "not a trailer: Ralph-Step: review/1\n\nXRalph-Step: review/1\nRalph-Step: implement/1/10")
	c4 := f.commitFile(t, r, c3, "d.txt", "4\n", "again\n\nRalph-Step: implement/1/1")
	head := c4
	// A subject quotes a title that is not ralph's (an issue's): it may hold any character an argument can,
	// the separators of git log's output included.
	c5 := f.commitFile(t, r, c4, "e.txt", "5\n", "ralph: research for #1 a\x1eb\x1ec\n\nRalph-Step: research/2")
	c6 := f.commitFile(t, r, c5, "f.txt", "6\n", "ralph: research for #1 \x1e"+c5+"\n\nRalph-Step: research/3")

	tests := []struct {
		name       string
		head, base string
		key, value string
		want       string
		wantFound  bool
	}{
		{"a step on the branch", head, onBase, "Ralph-Step", "research/1", c1, true},
		{"the newest of two", head, onBase, "Ralph-Step", "implement/1/1", c4, true},
		{"an older one when the newer is excluded", c3, onBase, "Ralph-Step", "implement/1/1", c2, true},
		{"exact value, not a prefix", head, onBase, "Ralph-Step", "implement/1/10", c3, true},
		{"any value", c3, onBase, "Ralph-Step", "", c3, true},
		{"only in the base's history", head, onBase, "Ralph-Step", "plan/1", "", false},
		{"commits of base are excluded", head, c2, "Ralph-Step", "research/1", "", false},
		{"not at the start of a line", head, onBase, "Ralph-Step", "review/1", "", false},
		{"head is base", head, head, "Ralph-Step", "", "", false},
		{"unknown key", head, onBase, "Other", "", "", false},
		{"a subject holding git log's record separator", c6, onBase, "Ralph-Step", "research/2", c5, true},
		{"the newest, whose subject holds a separator and a commit id", c6, onBase, "Ralph-Step", "", c6, true},
	}
	for _, tt := range tests {
		got, found, err := r.FindTrailer(ctx, tt.head, tt.base, tt.key, tt.value)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got != tt.want || found != tt.wantFound {
			t.Errorf("%s: FindTrailer = %q, %v; want %q, %v", tt.name, got, found, tt.want, tt.wantFound)
		}
	}
}

func TestBlobFileDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	sha := f.commitFile(t, r, f.base, "docs/plan.md", "the plan\n", "plan")

	tests := []struct {
		name      string
		commit    string
		path      string
		max       int64
		want      string
		wantFound bool
		wantErr   bool
	}{
		{"present", sha, "docs/plan.md", 100, "the plan\n", true, false},
		{"exactly the limit", sha, "docs/plan.md", 9, "the plan\n", true, false},
		{"over the limit", sha, "docs/plan.md", 8, "", false, true},
		{"absent", sha, "docs/none.md", 100, "", false, false},
		{"absent before the commit", f.base, "docs/plan.md", 100, "", false, false},
	}
	for _, tt := range tests {
		got, found, err := r.File(ctx, tt.commit, tt.path, tt.max)
		if string(got) != tt.want || found != tt.wantFound || (err != nil) != tt.wantErr {
			t.Errorf("%s: File = %q, %v, %v; want %q, %v, error %v", tt.name, got, found, err, tt.want, tt.wantFound, tt.wantErr)
		}
	}

	diff, err := r.Diff(ctx, f.base, sha)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff, "+++ b/docs/plan.md") || !strings.Contains(diff, "+the plan") {
		t.Errorf("Diff = %q", diff)
	}
	if tree, err := r.TreeOf(ctx, sha); err != nil || len(tree) != 40 {
		t.Errorf("TreeOf = %q, %v", tree, err)
	}
}

// TestInitCopy: the agent's copy gets a repository of its own that git accepts, at the commit, with a
// clean status; what the agent commits there stays there.
func TestInitCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	wt, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	if err := r.Checkout(ctx, index, wt, f.base); err != nil {
		t.Fatal(err)
	}
	if err := r.InitCopy(ctx, wt, index, f.base); err != nil {
		t.Fatal(err)
	}
	if got := f.git(t, wt, "rev-parse", "HEAD"); got != f.base {
		t.Errorf("the copy's HEAD = %s, want %s", got, f.base)
	}
	if got := f.git(t, wt, "status", "--porcelain"); got != "" {
		t.Errorf("the copy's status = %q, want clean", got)
	}
	writeFile(t, filepath.Join(wt, "agent.txt"), "x\n")
	f.git(t, wt, "add", ".")
	f.git(t, wt, "commit", "--quiet", "-m", "agent")
	agent := f.git(t, wt, "rev-parse", "HEAD")
	if _, err := (ExecRunner{Env: append(setupEnv(f.home), "GIT_DIR="+r.GitDir)}).Run(ctx, "", nil, "cat-file", "-e", agent); err == nil {
		t.Error("the agent's commit is in ralph's repository")
	}
}

// TestWriteBlobsAndUpdateIndex: blobs given on standard input are stored under BlobID's ids, and the index
// takes entries of every kind, a file replaced by a directory and a directory by a link included.
func TestWriteBlobsAndUpdateIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	index := filepath.Join(t.TempDir(), "index")
	if err := r.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadTree(ctx, index, f.base); err != nil {
		t.Fatal(err)
	}
	blobs := [][]byte{[]byte("script\n"), []byte("README.md/inner"), {}, []byte("data\x00with\nNUL")}
	if err := r.WriteBlobs(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	for _, b := range blobs {
		if _, err := r.Blob(ctx, BlobID(b), 100); err != nil {
			t.Errorf("blob %q not stored under %s: %v", b, BlobID(b), err)
		}
	}
	err := r.UpdateIndex(ctx, index, []IndexEntry{
		{Mode: "100755", SHA: BlobID(blobs[0]), Path: "run.sh"},
		{Mode: "100644", SHA: BlobID(blobs[1]), Path: "README.md/inner"},
		{Mode: "0", Path: "README.md"},
		{Mode: "100644", SHA: BlobID(blobs[2]), Path: "with space\tand tab\nand newline"},
		{Mode: "120000", SHA: BlobID(blobs[1]), Path: "link"},
		{Mode: "100644", SHA: BlobID(blobs[3]), Path: "data.bin"},
		{Mode: "0", Path: ".gitignore"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Entries(ctx, tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Path: "README.md/inner", Mode: "100644", SHA: BlobID(blobs[1]), Size: 15},
		{Path: "data.bin", Mode: "100644", SHA: BlobID(blobs[3]), Size: 13},
		{Path: "link", Mode: "120000", SHA: BlobID(blobs[1]), Size: 15},
		{Path: "run.sh", Mode: "100755", SHA: BlobID(blobs[0]), Size: 7},
		{Path: "with space\tand tab\nand newline", Mode: "100644", SHA: BlobID(blobs[2]), Size: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	if got, want := BlobID([]byte("hello\n")), "ce013625030ba8dba906f756967f9e9ca394464a"; got != want {
		t.Errorf("BlobID = %s, want %s", got, want)
	}
}

// TestCommitMessageNUL: a message quotes text that is not ralph's (an issue's title, which GitHub lets hold a
// NUL); it is an argument of git, which cannot hold one: the commit is made, the NUL written U+FFFD.
func TestCommitMessageNUL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.repo
	tree, err := r.TreeOf(ctx, f.base)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]func() (string, error){
		"CommitTree": func() (string, error) { return r.CommitTree(ctx, tree, f.base, "ralph: research for #1 a\x00b", sig) },
		"CommitNote": func() (string, error) { return r.CommitNote(ctx, "ralph: research for #1 a\x00b", "", sig) },
	}
	for name, commit := range made {
		sha, err := commit()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if msg, err := r.Message(ctx, sha); err != nil || msg != "ralph: research for #1 a\uFFFDb\n" {
			t.Errorf("%s: message = %q, %v", name, msg, err)
		}
	}
}
