package agent

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// Preset runs one of the agent CLIs (Claude Code, Codex, Gemini CLI) so that it follows the agent
// protocol: the prompt on stdin, non-interactive, allowed to edit files in the worktree and run commands
// there, with its JSON event stream turned into progress lines and usage.
type Preset struct {
	Name string   // claude, codex or gemini
	Argv []string // the program and its arguments
	// Limits are agent.max_turns and agent.max_cost, enforced from the reported usage (Claude Code also
	// enforces both itself).
	Limits limits
	Model  string        // agent.model, recorded when the CLI does not report its model
	Grace  time.Duration // between SIGTERM and SIGKILL; 0 means DefaultGrace
}

var _ Runner = (*Preset)(nil)

// Programs are the CLIs' program names, as the npm packages install them.
var Programs = map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini"}

// npmPackages are the npm packages that install the presets' programs.
var npmPackages = map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}

// newPreset builds the invocation of a preset from the config. agent.command, when set, replaces the
// program (say "npx -y @openai/codex@0.169.0"), and is run by sh with the preset's arguments after it.
func newPreset(cfg config.Agent) *Preset {
	var args []string
	switch cfg.Preset {
	case "claude":
		args = claudeArgs(cfg)
	case "codex":
		args = codexArgs(cfg)
	case "gemini":
		args = geminiArgs(cfg)
	}
	args = append(args, cfg.Args...)
	argv := append([]string{Programs[cfg.Preset]}, args...)
	if cfg.Command != "" {
		argv = append([]string{"sh", "-c", cfg.Command + ` "$@"`, "sh"}, args...)
	}
	return &Preset{Name: cfg.Preset, Argv: argv, Limits: limits{MaxTurns: cfg.MaxTurns, MaxCost: cfg.MaxCost}, Model: cfg.Model}
}

// Run runs the CLI like [Command.Run] does a command.
func (p *Preset) Run(ctx context.Context, inv Invocation) (Result, error) {
	var parser eventParser
	switch p.Name {
	case "claude":
		parser = &claudeParser{}
	case "codex":
		parser = &codexParser{model: p.Model}
	case "gemini":
		parser = &geminiParser{model: p.Model}
	}
	argv, lim := p.Argv, p.Limits
	if p.Name == "codex" && inv.Boundary != nil && inv.Boundary.Enforced() {
		argv = codexInBoundary(argv)
	}
	if g := inv.Gateway; g != nil {
		// The gateway meters the cost and refuses requests past agent.max_cost itself: the CLI's own
		// claim of its cost would be a second limit, counted otherwise.
		argv, lim.MaxCost = withoutFlag(argv, "--max-budget-usd"), 0
		argv = append(argv, g.presetArgs(p.Name)...)
		if err := g.prepareHome(p.Name, inv.Env); err != nil {
			return Result{}, fmt.Errorf("preparing the agent's HOME for ralph's model gateway: %w", err)
		}
	}
	if p.Name == "gemini" {
		if err := seedGeminiHome(inv); err != nil {
			return Result{}, err
		}
	}
	return process{argv: argv, grace: p.Grace, parser: parser, limits: lim}.run(ctx, inv)
}

// withoutFlag is argv without flag and the value after it.
func withoutFlag(argv []string, flag string) []string {
	out := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		if argv[i] == flag && i+1 < len(argv) {
			i++
			continue
		}
		out = append(out, argv[i])
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
