package agent

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Preflight checks, before ralph touches an issue, that a step can run the agent at all: the preset is
// known, its CLI is on the agent's PATH, every variable agent.env passes through is set, and the
// boundary can be set up. It returns the boundary's description for the log.
func Preflight(cfg config.Agent, env []string, sb sandbox.Config) (string, error) {
	var problems []string
	if _, err := New(cfg); err != nil {
		problems = append(problems, err.Error())
	} else if cfg.Preset != "command" {
		program := Programs[cfg.Preset]
		if cfg.Command != "" {
			program = strings.Fields(cfg.Command)[0]
		}
		path, err := lookPath(program, Environ(env, nil, cfg.Env))
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case sb.Separate && !sandbox.CanReach(path, sb.UID, sb.GID):
			problems = append(problems, fmt.Sprintf("the agent's user (uid %d) cannot run %s: install it where every user can (npm install -g puts it in /usr/local)", sb.UID, path))
		}
	}
	missing := Missing(env, cfg.Env)
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("agent.env passes %s through, but ralph's environment does not have it: set it in the workflow step's env (from a secret), or remove it from agent.env", strings.Join(missing, ", ")))
	}
	b, err := sandbox.New(sb)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return "", &PreflightError{Problems: problems, Missing: missing}
	}
	return b.Describe(), nil
}

// PreflightError is what Preflight found, each problem on its own (gh ralph doctor shows one a line);
// Missing are the variables agent.env passes through that are not set, for a door to say where to set them.
type PreflightError struct {
	Problems []string
	Missing  []string
}

func (e *PreflightError) Error() string {
	return "the agent cannot run here, so ralph left the issue alone: " + strings.Join(e.Problems, "; ")
}
