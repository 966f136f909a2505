//go:build unix

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// offsets draws the given offsets in turn, then none.
func offsets(offs ...int) func() (int, bool) {
	return func() (int, bool) {
		if len(offs) == 0 {
			return 0, false
		}
		o := offs[0]
		offs = offs[1:]
		return o, true
	}
}

// A uid a run holds is not another's, even while no process of it runs; once released it is free again.
func TestReserveSkipsAHeldUID(t *testing.T) {
	dir := t.TempDir()
	uid, gid, release, err := reserve(dir, offsets(7))
	if err != nil || uid != AgentUID+7 || gid != AgentGID+7 {
		t.Fatalf("first reserve = %d, %d, %v; want %d", uid, gid, err, AgentUID+7)
	}
	uid2, _, release2, err := reserve(dir, offsets(7, 9))
	if err != nil || uid2 != AgentUID+9 {
		t.Fatalf("second reserve = %d, %v; want %d (the held %d skipped)", uid2, err, AgentUID+9, uid)
	}
	defer release2()
	if _, _, _, err := reserve(dir, offsets(7, 7, 9)); err == nil || !strings.Contains(err.Error(), "no free uid for the agent") {
		t.Fatalf("with every drawn uid held: err = %v, want the no-free-uid error", err)
	}
	release()
	uid3, _, release3, err := reserve(dir, offsets(7))
	if err != nil || uid3 != uid {
		t.Fatalf("after release: reserve = %d, %v; want %d again", uid3, err, uid)
	}
	release3()
}

// A run killed while it holds its uid holds it no longer: the kernel drops the lock with the process.
func TestReserveHeldByAnotherProcessUntilItDies(t *testing.T) {
	if os.Getenv("RALPH_TEST_HOLD_UID_DIR") != "" {
		if _, _, _, err := reserve(os.Getenv("RALPH_TEST_HOLD_UID_DIR"), offsets(11)); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestReserveHeldByAnotherProcessUntilItDies$")
	cmd.Env = append(os.Environ(), "RALPH_TEST_HOLD_UID_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("the holder did not say it holds the uid: %q %v", buf, err)
	}
	if uid, _, _, err := reserve(dir, offsets(11)); err == nil {
		t.Fatalf("reserved %d, which another process holds", uid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	uid, _, release, err := reserve(dir, offsets(11))
	if err != nil || uid != AgentUID+11 {
		t.Fatalf("after the holder was killed: reserve = %d, %v; want %d", uid, err, AgentUID+11)
	}
	release()
}

// The directory of the locks is refused unless only root may write it.
func TestReserveDirRefusesAWritableDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ralph-ids")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := reserveDir([]string{parent}); err == nil || !strings.Contains(err.Error(), "only root may write") {
		t.Fatalf("err = %v, want a refusal of a directory others may write", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the rest needs root: a directory root owns (run the tests as root)")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, err := reserveDir([]string{parent}); err != nil || got != dir {
		t.Fatalf("reserveDir = %q, %v; want %q", got, err, dir)
	}
}

// reservedIDs is a uid and gid for a test's agent, held as a run holds them (ReserveIDs) until the test
// ends, so that no test or run of another package draws it meanwhile.
func reservedIDs(t testing.TB) (uid, gid int) {
	t.Helper()
	uid, gid, release, err := ReserveIDs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return uid, gid
}
