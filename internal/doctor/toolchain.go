package doctor

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// setupSteps is the setup step to add before ralph's for a verify program the Action's agent does not find.
var setupSteps = map[string]string{
	"go": "actions/setup-go (with: go-version-file: go.mod)", "gofmt": "actions/setup-go (with: go-version-file: go.mod)",
	"node": "actions/setup-node (with: node-version-file: .nvmrc, or node-version)", "npm": "actions/setup-node (with: node-version-file: .nvmrc, or node-version; cache: npm)",
	"npx": "actions/setup-node", "yarn": "actions/setup-node (with: cache: yarn)", "pnpm": "pnpm/action-setup, then actions/setup-node (with: cache: pnpm)",
	"python": "actions/setup-python (with: python-version-file: .python-version or pyproject.toml)", "python3": "actions/setup-python",
	"pytest": "actions/setup-python, then a step that runs python -m pip install pytest", "pip": "actions/setup-python", "tox": "actions/setup-python, then python -m pip install tox",
	"mvn": "actions/setup-java (with: distribution: temurin, java-version, cache: maven)", "gradle": "actions/setup-java (with: distribution: temurin, java-version, cache: gradle)",
	"java":  "actions/setup-java (with: distribution: temurin, java-version)",
	"cargo": "a step that runs rustup toolchain install (the runner has rustup)", "rustc": "a step that runs rustup toolchain install",
}

// verifyPrograms checks that each verify command's program, where ralph can tell which it is (the first word
// of a plain command; a relative path such as ./gradlew is the repository's own), is on the PATH the verify
// commands run with and can be run by the agent's uid, and says what to add where it is not: the setup step
// in the Action, the path to install it in or open on this machine.
func verifyPrograms(cfg config.Config, env []string, sb sandbox.Config, where Place) []Finding {
	var problems []Finding
	seen := map[string]bool{}
	agentEnv := agent.Environ(env, nil, cfg.Agent.Env)
	path := agent.Getenv(agentEnv, "PATH")
	for _, cmd := range cfg.Verify {
		program := agent.CommandProgram(cmd)
		if program == "" || seen[program] {
			continue
		}
		seen[program] = true
		found, err := agent.LookPath(program, agentEnv)
		if err != nil {
			msg := fmt.Sprintf("verify runs `%s`, but %s is not on the PATH the agent and verify run with (%s)", cmd, program, path)
			if filepath.IsAbs(program) {
				msg = fmt.Sprintf("verify runs `%s`, but %s is not an executable file here", cmd, program)
			}
			if where == InAction {
				step := setupSteps[program]
				if step == "" {
					step = "the step that installs " + program
				}
				problems = append(problems, problem(msg, "add "+step+" to the workflow before ralph's step (gh ralph init writes the setup steps the repository's files call for; README: Toolchains)"))
			} else {
				problems = append(problems, problem(msg, "install "+program+" on this machine, or put its directory on PATH, or fix verify in "+config.DefaultPath))
			}
			continue
		}
		if sb.Separate {
			uid, gid := sb.UID, sb.GID
			if uid == 0 {
				uid, gid = sandbox.AgentUID, sandbox.AgentGID
			}
			if sandbox.CanRun(sb, found) {
				continue
			}
			fix := "install it where every user can read and run it (/usr/local, /opt), or run gh ralph as yourself, not root"
			if where == InAction {
				fix = "install it in the workflow before ralph's step with its setup action (README: Toolchains)"
			}
			closed := "a directory on the way"
			if d := closedDir(found, uid, gid); d != "" {
				closed = d
			}
			problems = append(problems, problem(fmt.Sprintf("verify runs `%s`, but the agent's user (uid %d) cannot run %s: %s is closed to other users", cmd, uid, found, closed), fix))
		}
	}
	return problems
}

// closedDir is the first directory on the way to path (its links resolved) that uid cannot enter, "" when
// none is.
func closedDir(path string, uid, gid int) string {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	dir := string(filepath.Separator)
	for _, part := range strings.Split(strings.TrimPrefix(filepath.Dir(resolved), dir), string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		if !sandbox.CanReach(dir, uid, gid) {
			return dir
		}
	}
	return ""
}
