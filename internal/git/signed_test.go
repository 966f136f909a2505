package git

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// A commit GitHub signed is written from its verification's payload (the object without gpgsig) and
// signature, byte for byte: it has GitHub's id, and git reads the signature back.
func TestWriteSignedCommit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tree := f.git(t, f.checkout, "rev-parse", f.base+"^{tree}")
	signature := "-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ\n=abcd\n-----END PGP SIGNATURE-----\n"
	payload := "tree " + tree + "\nparent " + f.base + "\nauthor A <a@example.com> 1700000000 +0000\n" +
		"committer GitHub <noreply@github.com> 1700000000 +0000\n\nralph: research #1\n\nRalph-Step: research\n"
	object := strings.Replace(payload, "\n\n", "\ngpgsig "+strings.ReplaceAll(strings.TrimSuffix(signature, "\n"), "\n", "\n ")+"\n\n", 1)
	sum := sha1.Sum([]byte(fmt.Sprintf("commit %d\x00%s", len(object), object)))
	got, err := f.repo.WriteSignedCommit(ctx, payload, signature)
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("WriteSignedCommit = %s, want GitHub's id %s", got, want)
	}
	if sig := f.ralph(t, "cat-file", "commit", got); !strings.Contains(sig, "gpgsig -----BEGIN PGP SIGNATURE-----\n \n wsBcBAABCAAQBQJ\n") {
		t.Errorf("the written commit carries no signature:\n%s", sig)
	}
	if _, err := f.repo.WriteSignedCommit(ctx, "not a commit", signature); err == nil {
		t.Error("a payload that is not a commit object was written")
	}
}
