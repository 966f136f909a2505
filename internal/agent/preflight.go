package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Preflight checks, before ralph touches an issue, that a step can run the agent at all: the preset is
// known, its CLI is on the agent's PATH, every variable agent.env passes through is set, and the
// boundary can be set up. It returns the boundary's description for the log.
func Preflight(cfg config.Agent, env []string, sb sandbox.Config) (string, error) {
	var problems []string
	actions := Getenv(env, "GITHUB_ACTIONS") == "true"
	if _, err := New(cfg, nil); err != nil {
		problems = append(problems, err.Error())
	} else if cfg.Preset != "command" {
		p, _ := preset.Lookup(cfg.Preset)
		program := p.Program
		if cfg.Command != "" {
			program = strings.Fields(cfg.Command)[0]
		}
		path, err := lookPath(program, Environ(env, nil, cfg.Env), actions)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case !sandbox.CanRun(sb, path):
			problems = append(problems, fmt.Sprintf("the agent's user (uid %d) cannot run %s: install it where every user can (npm install -g puts it in /usr/local)", sb.UID, path))
		}
	} else if program := CommandProgram(cfg.Command); program != "" {
		// The command preset's program, when ralph can tell which it is, is checked as a preset's CLI is:
		// a command that cannot start would otherwise enroll the issue and record a failure.
		path, err := commandPath(program, Environ(env, nil, cfg.Env), actions)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case path != "" && !sandbox.CanRun(sb, path):
			problems = append(problems, fmt.Sprintf("the agent's user (uid %d) cannot run %s: install it where every user can", sb.UID, path))
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

// assignment is a shell variable assignment that may precede a command (FOO=1 my-agent).
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellWords are the words that start a command line but name no program ralph could look for: the shell's
// keywords and builtins. A command that starts with one is not checked.
var shellWords = map[string]bool{
	"!": true, "{": true, "(": true, ".": true, ":": true, "[": true, "case": true, "cd": true, "command": true,
	"echo": true, "eval": true, "export": true, "false": true, "for": true, "if": true, "printf": true, "set": true,
	"source": true, "test": true, "time": true, "true": true, "until": true, "while": true, "exit": true,
}

// CommandProgram is the program the command preset's shell command starts, when ralph can tell: the first
// word after variable assignments (and exec or env). "" when the command starts with a shell keyword or
// builtin, or its first word is not a plain word (quotes, expansions, redirections), or is a relative path
// (the agent's copy of the repository, which does not exist before a step, is where it is resolved).
func CommandProgram(shell string) string {
	words := strings.Fields(shell)
	for len(words) > 0 && (assignment.MatchString(words[0]) || words[0] == "exec" || words[0] == "env") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	w := words[0]
	if shellWords[w] || strings.ContainsAny(w, "$`'\"\\(){}[]<>|&;*?~#=") {
		return ""
	}
	if strings.Contains(w, "/") && !filepath.IsAbs(w) {
		return ""
	}
	return w
}

// commandPath finds the command preset's program: an absolute path must exist and be executable, a name
// must be on the agent's PATH.
func commandPath(program string, env []string, inActions bool) (string, error) {
	if filepath.IsAbs(program) {
		info, err := os.Stat(program)
		switch {
		case err != nil:
			return "", fmt.Errorf("agent.command runs %s, which does not exist here: install it there, or fix agent.command", program)
		case info.IsDir() || info.Mode()&0o111 == 0:
			return "", fmt.Errorf("agent.command runs %s, which is not an executable file: chmod +x it, or fix agent.command", program)
		}
		return program, nil
	}
	path, err := lookPath(program, env, inActions)
	if err != nil {
		return "", fmt.Errorf("agent.command runs %s, which is not on the agent's PATH: install it there, or name it by its path in agent.command", program)
	}
	return path, nil
}

// MachinePath is the absolute path agent.command names that only this machine is likely to have (under
// home, the user's home directory, or a temporary directory), for init and doctor to warn about: the
// Action's runner does not have it. "" when there is none.
func MachinePath(shell, home string) string {
	program := CommandProgram(shell)
	if !filepath.IsAbs(program) {
		return ""
	}
	for _, dir := range []string{home, os.TempDir(), "/home", "/Users", "/root", "/tmp"} {
		if dir == "" || dir == "/" {
			continue
		}
		if rel, err := filepath.Rel(dir, program); err == nil && !strings.HasPrefix(rel, "..") {
			return program
		}
	}
	return ""
}

// LookPath finds a program as the agent's shell would in env: an absolute path must be an executable file,
// a name must be on env's PATH.
func LookPath(program string, env []string) (string, error) {
	if filepath.IsAbs(program) {
		info, err := os.Stat(program)
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", program)
		}
		return program, nil
	}
	return lookPath(program, env, false)
}
