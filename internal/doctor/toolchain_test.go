package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// program writes an executable shell script at dir/name.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func commandConfig(verify ...string) config.Config {
	cfg := config.Default()
	cfg.Agent.Preset, cfg.Agent.Command = "command", "true"
	cfg.Verify = verify
	return cfg
}

// Every run checks, before it touches the issue, that each verify command's program is on the PATH verify
// runs with, and says what to add: the setup step in the Action, PATH on this machine. Programs of the
// repository's own (./gradlew) and shell builtins are not looked for.
func TestStartChecksTheVerifyPrograms(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	program(t, bin, "present")
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	cfg := commandConfig("go test ./...", "./gradlew test", "present --flag", "cd sub && make", "go vet ./...")
	for _, c := range []struct {
		where Place
		fix   string
	}{{InAction, "add actions/setup-go (with: go-version-file: go.mod) to the workflow before ralph's step"}, {Here, "install go on this machine, or put its directory on PATH"}} {
		_, err := Start(context.Background(), cfg, env, sandbox.Config{}, nil, c.where)
		var se *StartError
		if !errors.As(err, &se) {
			t.Fatalf("%v: Start = %v, want the missing go", c.where, err)
		}
		if len(se.Problems) != 1 {
			t.Fatalf("%v: %d problems, want one (go, once): %v", c.where, len(se.Problems), se.Problems)
		}
		p := se.Problems[0]
		if !strings.Contains(p.Msg, "verify runs `go test ./...`, but go is not on the PATH") || !strings.HasPrefix(p.Fix, c.fix) {
			t.Errorf("%v: %s", c.where, p)
		}
	}
	// With go on the PATH, nothing is said.
	program(t, bin, "go")
	if _, err := Start(context.Background(), cfg, env, sandbox.Config{}, nil, InAction); err != nil {
		t.Errorf("Start with every program there: %v", err)
	}
	// doctor says the same, one line each.
	fs := Problems(Agent(context.Background(), commandConfig("pytest -q"), env, sandbox.Config{}, InAction))
	if len(fs) != 1 || !strings.Contains(fs[0].Fix, "actions/setup-python") {
		t.Errorf("doctor: %v", fs)
	}
}

// As root on a laptop, a program the agent's uid cannot reach (a shim under a home only its owner may enter)
// is a problem before the run starts, with what to do.
func TestStartChecksTheAgentUIDCanRunTheVerifyProgram(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent runs as a uid of its own only when ralph is root")
	}
	t.Parallel()
	// t.TempDir's parent is closed to other users: this test's directories are under one open to all.
	base, err := os.MkdirTemp("", "ralph-doctor-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	shims := filepath.Join(home, ".pyenv", "shims")
	program(t, shims, "python")
	open := filepath.Join(base, "usr", "bin")
	program(t, open, "make")
	env := []string{"PATH=" + shims + ":" + open, "HOME=" + home}
	sb := sandbox.Config{Separate: true, UID: sandbox.AgentUID + 3901, GID: sandbox.AgentGID + 3901}
	_, err = Start(context.Background(), commandConfig("python -m pytest", "make test"), env, sb, nil, Here)
	var se *StartError
	if !errors.As(err, &se) || len(se.Problems) != 1 {
		t.Fatalf("Start = %v, want one problem (python)", err)
	}
	if p := se.Problems[0]; !strings.Contains(p.Msg, "cannot run "+filepath.Join(shims, "python")+": "+home+" is closed to other users") || !strings.Contains(p.Fix, "where every user can") {
		t.Errorf("%s", p)
	}
	// With the home's toolchains shown to the agent (gh ralph as root), the shim is the agent's to run.
	sb.Home, sb.HomeTools = home, []string{filepath.Join(home, ".pyenv")}
	if _, err := Start(context.Background(), commandConfig("python -m pytest", "make test"), env, sb, nil, Here); err != nil {
		t.Errorf("Start with the home's toolchains shown: %v", err)
	}
}
