// Package doctor checks that ralph can run in a repository and says, for each problem, what to do: the
// config, the agent, the workflow file, and, with a GitHub client, the token, the repository's settings,
// secrets and labels. gh ralph doctor runs them all; the Action runs those that cost no request before it
// writes anything.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Finding is one thing checked: what was found and, for a problem, what to do.
type Finding struct {
	Problem bool
	// Warn is something that works here but is likely wrong elsewhere: not a problem, shown with "!".
	Warn bool
	Msg  string
	Fix  string
	// Door is whom the check is for: both doors, the Action, or gh ralph on this machine.
	Door Door
}

// Door is a way ralph runs, as doctor groups its checks: someone who uses one door alone reads the checks
// of that door and of both.
type Door int

const (
	// Both: the config, the labels, the repository's rules: what every run needs, wherever it runs.
	Both Door = iota
	// Action: the workflow, its secrets and GitHub's Actions settings: what ralph's steps in GitHub Actions
	// need.
	Action
	// Machine: the agent's CLI and key, your token, your git's signing and reach: what gh ralph needs on
	// this machine (advance runs steps here; enroll, approve and the rest write as you).
	Machine
)

// Doors are the doors in the order doctor prints their checks.
func Doors() []Door { return []Door{Both, Action, Machine} }

// Title is the heading doctor prints over a door's checks.
func (d Door) Title() string {
	switch d {
	case Action:
		return "The Action (ralph's steps in GitHub Actions):"
	case Machine:
		return "This machine (gh ralph advance runs steps here; enroll, approve and the rest write as you):"
	}
	return "Both doors (the Action and gh ralph on this machine):"
}

// Name is the door in a few words ("the Action").
func (d Door) Name() string {
	switch d {
	case Action:
		return "the Action"
	case Machine:
		return "this machine"
	}
	return "both doors"
}

// For is fs, each for door d.
func For(d Door, fs []Finding) []Finding {
	for i := range fs {
		fs[i].Door = d
	}
	return fs
}

// String is the finding on one line: "✓ msg", "! msg: fix" or "X msg: fix".
func (f Finding) String() string {
	if f.Warn && !f.Problem {
		return "! " + f.Msg + ": " + f.Fix
	}
	if !f.Problem {
		return "✓ " + f.Msg
	}
	if f.Fix == "" {
		return "X " + f.Msg
	}
	return "X " + f.Msg + ": " + f.Fix
}

func ok(format string, args ...any) Finding { return Finding{Msg: fmt.Sprintf(format, args...)} }

func problem(msg, fix string) Finding { return Finding{Problem: true, Msg: msg, Fix: fix} }

// Problems are the findings that are problems.
func Problems(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Problem {
			out = append(out, f)
		}
	}
	return out
}

// Place is where the agent would run: here (gh ralph advance) or in the Action; the advice differs.
type Place int

const (
	Here Place = iota
	InAction
)

// Agent checks that the agent can run, as Start does before a step (agent.Preflight, a key for a
// preset's CLI, its version), and says what was found.
func Agent(ctx context.Context, cfg config.Config, env []string, sb sandbox.Config, where Place) []Finding {
	info, err := Start(ctx, cfg, env, sb, nil, where)
	var fs []Finding
	for _, line := range info {
		if strings.HasPrefix(line, "agent: ") {
			fs = append(fs, ok("%s", line))
		}
	}
	var se *StartError
	switch {
	case errors.As(err, &se):
		fs = append(fs, se.Problems...)
	case err != nil:
		fs = append(fs, problem(err.Error(), ""))
	case cfg.Agent.Preset == "command":
		fs = append(fs, ok("agent: the command %s", cfg.Agent.Command))
	}
	if w, ok := MachineCommand(cfg, agent.Getenv(env, "HOME")); ok {
		fs = append(fs, w)
	}
	if err == nil && len(cfg.Agent.Env) > 0 {
		fs = append(fs, ok("agent.env passes %s to the agent", strings.Join(sortedKeys(cfg.Agent.Env), ", ")))
	}
	// A kernel that cannot hold the agent to the allow-list, required, is already a problem of Start's.
	if f, said := WithoutGateway(cfg); said {
		fs = append(fs, f)
	}
	fs = append(fs, Vendors(cfg, env)...)
	if f, said := Network(cfg); said && !(f.Problem && se != nil) {
		fs = append(fs, f)
	}
	if f, said := Firewall(cfg, sb); said {
		fs = append(fs, f)
	}
	return fs
}

// WithoutGateway warns, for a preset whose CLI then holds more than its vendor's key (preset.Preset's
// WithoutGateway), that it runs without ralph's gateway, and what it holds.
func WithoutGateway(cfg config.Config) (Finding, bool) {
	p, found := preset.Lookup(cfg.Agent.Preset)
	if !found || p.WithoutGateway == "" || cfg.GatewayVendor() != "" {
		return Finding{}, false
	}
	return Finding{Warn: true, Msg: p.WithoutGateway,
		Fix: "remove gateway.enabled: false: then ralph holds the " + p.Vendor + " key (" + p.KeyVars[0] + ") and the agent gets a key of ralph's gateway, good for one run and metered"}, true
}

// Vendors says, for a preset whose CLI talks to several vendors (opencode), which of the others besides
// agent.model's ralph's gateway serves, with the key ralph holds for each, and warns of each it cannot
// serve: ralph holds no key for it, so the gateway refuses that vendor's models (a small model for
// titles, say). The key of agent.model's vendor is Start's to check.
func Vendors(cfg config.Config, env []string) []Finding {
	p, _ := preset.Lookup(cfg.Agent.Preset)
	var fs []Finding
	for _, name := range cfg.GatewayMore() {
		v := gateway.Vendor(name)
		if c, held := agent.ModelCredential(v, env, cfg.Agent.Env); held {
			fs = append(fs, ok("ralph's model gateway also serves %s's %s models, with the key ralph holds in %s, metered into the same budget", p.Title, v, c.Name))
			continue
		}
		fs = append(fs, Finding{Warn: true, Msg: fmt.Sprintf("ralph holds no %s key (%s): ralph's model gateway refuses %s's %s models, which its config may name (small_model, say)",
			v, strings.Join(v.CredentialNames(), " or "), p.Title, v),
			Fix: "to use them, set " + v.CredentialNames()[0] + " in ralph's environment (from a secret, in the workflow step's env)"})
	}
	return fs
}

// MachineCommand warns when agent.command names a program by a path only this machine is likely to have
// (under a home or temporary directory): it runs here, and fails on the Action's runner.
func MachineCommand(cfg config.Config, home string) (Finding, bool) {
	if cfg.Agent.Preset != "command" {
		return Finding{}, false
	}
	p := agent.MachinePath(cfg.Agent.Command, home)
	if p == "" {
		return Finding{}, false
	}
	return Finding{Warn: true, Msg: "agent.command runs " + p + ", a path on this machine that the Action's runner does not have",
		Fix: "commit the program to the repository and run it as ./<its path> (or install it in the workflow before ralph's step) for steps in GitHub Actions"}, true
}

// missingKeys says where to set the variables agent.env passes through.
func missingKeys(missing []string, where Place) Finding {
	msg := fmt.Sprintf("agent.env passes %s through, but it is not set", strings.Join(missing, ", "))
	if where == InAction {
		var lines []string
		for _, m := range missing {
			lines = append(lines, fmt.Sprintf("%s: ${{ secrets.%s }}", m, m))
		}
		return problem(msg, "give it to ralph's step in the workflow (env: "+strings.Join(lines, ", ")+") and store the secret (gh secret set "+missing[0]+")")
	}
	return problem(msg+" here", "export "+missing[0]+"=… in your shell before gh ralph advance (only needed to run steps on this machine)")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FixStep is in the message of every finding about what the fix step needs of the workflow: that step
// alone is missing without it, so none of them stops a run from starting.
const FixStep = "(the fix step)"

var _ GitHub = (*ghapi.Client)(nil)

// Documents says where the research, plan and reviews are committed (documents:).
func Documents(cfg config.Config) Finding {
	if cfg.Documents == config.DocumentsSeparate {
		return ok("documents: separate: the research, plan and reviews are committed on ralph's own branch %sdocs/<N>, linked from the issue and the pull request; the pull request holds only the code", cfg.BranchPrefix)
	}
	return ok("documents: branch: the research, plan and reviews are committed on the issue's branch, so they are in the pull request and land with the merge (documents: separate keeps them out)")
}
