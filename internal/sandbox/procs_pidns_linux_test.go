package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// In a container, ralph's supervisor may be alone in its PID namespace but for its first process (ralph,
// which kill(-1) never signals): kill(-1) then finds nobody and says ESRCH. That is nothing left to kill,
// not a failure of the step (the Action's image, run as a runner runs it, failed every step so).
func TestKillUIDAloneInItsPIDNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a PID namespace of its own, and another uid to kill as")
	}
	cmd := exec.Command(helper)
	cmd.Env = append(os.Environ(), helperEnv+"=kill-alone")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "killed 0" {
		t.Errorf("killUID alone in a PID namespace: %v\n%s", err, out)
	}
}

// killAlone is the helper's side: it is the first process of its namespace, and the only one.
func killAlone() int {
	uid := AgentUID + 7
	reaper, _ := reaperUID(uid)
	found, err := killUID(uid, reaper, func() {}, time.Second, nil)
	if err != nil {
		fmt.Println("killUID:", err)
		return 1
	}
	fmt.Println("killed", found)
	return 0
}
