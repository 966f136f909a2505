package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// NoKey says, for a preset whose agent.env passes none of the variables its CLI reads its key from, what
// is wrong and what to add; "" when one is passed (or the preset is command, whose needs ralph cannot know).
func NoKey(cfg config.Agent) string {
	p, ok := preset.Lookup(cfg.Preset)
	if !ok {
		return ""
	}
	vars := p.KeyVars
	for _, v := range vars {
		if _, ok := cfg.Env[v]; ok {
			return ""
		}
	}
	return fmt.Sprintf("agent.env passes no API key to %s: the agent's environment is an allowlist, so add %s: \"\" under agent.env (the CLI reads %s)",
		cfg.Preset, vars[0], strings.Join(vars, " or "))
}

// Version is the first line the agent CLI prints for --version, found on the agent's PATH as a step finds
// it ("" for preset command, or when agent.command replaces the program: running it could do anything).
func Version(ctx context.Context, cfg config.Agent, env []string) (string, error) {
	p, ok := preset.Lookup(cfg.Preset)
	if !ok || cfg.Command != "" {
		return "", nil
	}
	program := p.Program
	agentEnv := Environ(env, nil, cfg.Env)
	path, err := lookPath(program, agentEnv, Getenv(env, "GITHUB_ACTIONS") == "true")
	if err != nil {
		return "", err
	}
	home, err := os.MkdirTemp("", "ralph-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = append(agentEnv, "HOME="+home, "TMPDIR="+home)
	cmd.Dir = home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || ctx.Err() != nil {
			return "", fmt.Errorf("%s --version failed (%v): %s", program, err, strings.TrimSpace(firstLine(out.String())))
		}
		return "", err
	}
	return program + " " + strings.TrimSpace(firstLine(out.String())), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
