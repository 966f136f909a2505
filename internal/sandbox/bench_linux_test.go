package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkConfined measures what the boundary adds to starting a program and making sure nothing of it
// is left: `true` run directly, against `true` run through the supervisor (Landlock, and another uid when
// root) followed by Reap. A step pays it once for the agent and once per verify command.
//
//	go test ./internal/sandbox -run '^$' -bench Confined
func BenchmarkConfined(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("confined", func(b *testing.B) {
		separate := os.Geteuid() == 0
		uid, gid := reservedIDs(b)
		bd, err := New(Config{Separate: separate, UID: uid, GID: gid, Writable: []string{b.TempDir()}, Launcher: launcher, ReapDescendants: false})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := bd.Command("/bin/true", nil).Run(); err != nil {
				b.Fatal(err)
			}
			if _, err := bd.Reap(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
