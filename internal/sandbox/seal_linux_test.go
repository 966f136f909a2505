package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSealAndCanReach(t *testing.T) {
	t.Parallel()
	// Not AgentUID: a sweep of another test or package may kill all of its processes.
	agent, _ := reservedIDs(t)
	tests := []struct {
		name       string
		mode       os.FileMode
		agentGroup bool // the directory's group is the agent's gid
		wantMode   os.FileMode
		wantSeals  bool
	}{
		{"open to others", 0o755, false, 0o750, true},
		{"the agent's group", 0o775, true, 0o700, true},
		{"already private", 0o700, false, 0o700, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.agentGroup && os.Geteuid() != 0 {
				t.Skip("needs root: giving a directory the agent's group")
			}
			dir := openDir(t, -1)
			sealed := filepath.Join(dir, "runner")
			if err := os.Mkdir(sealed, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sealed, tt.mode); err != nil {
				t.Fatal(err)
			}
			if tt.agentGroup {
				if err := os.Chown(sealed, -1, agent); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(sealed, "file")
			if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			wantBefore := tt.mode&0o005 == 0o005 || tt.agentGroup
			if got := CanReach(file, agent, agent); got != wantBefore {
				t.Errorf("CanReach before Seal = %v, want %v", got, wantBefore)
			}
			agentCanRead(t, file, agent, wantBefore)

			changed, err := Seal([]string{sealed, filepath.Join(dir, "missing")}, agent, agent)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(changed) == 1 && strings.HasPrefix(changed[0], sealed+": mode "); got != tt.wantSeals {
				t.Errorf("Seal changed %q", changed)
			}
			info, err := os.Stat(sealed)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != tt.wantMode {
				t.Errorf("mode after Seal = %04o, want %04o", got, tt.wantMode)
			}
			if CanReach(file, agent, agent) {
				t.Error("CanReach after Seal = true")
			}
			agentCanRead(t, file, agent, false)
			if !CanReach(file, 0, 0) {
				t.Error("root cannot reach it")
			}
		})
	}
}

func TestSealRefusesTheAgentsOwn(t *testing.T) {
	t.Parallel()
	dir := openDir(t, -1)
	uid := os.Geteuid()
	if _, err := Seal([]string{dir}, uid, -1); err == nil || !strings.Contains(err.Error(), "belongs to the agent's uid") {
		t.Errorf("Seal of the agent's own directory = %v", err)
	}
}

// agentCanRead checks CanReach against the kernel, when the test can run something as the agent.
func agentCanRead(t *testing.T, file string, uid int, want bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	cmd := exec.Command("/bin/cat", file)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	if got := cmd.Run() == nil; got != want {
		t.Errorf("uid %d can read %s: %v, want %v", uid, file, got, want)
	}
}
