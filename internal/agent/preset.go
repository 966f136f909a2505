package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// Preset runs one of the agent CLIs of package preset so that it follows the agent protocol: the prompt
// on stdin, non-interactive, allowed to edit files in the worktree and run commands there, with its JSON
// event stream turned into progress lines and usage.
type Preset struct {
	Name string   // the preset's name (preset.List)
	Argv []string // the program and its arguments
	// Limits are agent.max_turns and agent.max_cost, enforced from the reported usage (Claude Code also
	// enforces both itself).
	Limits limits
	Model  string        // agent.model, recorded when the CLI does not report its model
	Grace  time.Duration // between SIGTERM and SIGKILL; 0 means DefaultGrace
	// InActions is GITHUB_ACTIONS=true in ralph's environment: a CLI missing there is missing from ralph's
	// image (each agent's CLI has an image of its own).
	InActions bool
}

var _ Runner = (*Preset)(nil)

// parsers are the event parsers of the presets' output formats.
var parsers = map[preset.Stream]func(model string) eventParser{
	preset.ClaudeStreamJSON: func(string) eventParser { return &claudeParser{} },
	preset.CodexJSONL:       func(m string) eventParser { return &codexParser{model: m} },
	preset.GeminiStreamJSON: func(m string) eventParser { return &geminiParser{model: m} },
	preset.CopilotJSONL:     func(m string) eventParser { return &copilotParser{model: m} },
	preset.OpencodeJSONL:    func(m string) eventParser { return &opencodeParser{model: m} },
	preset.PiJSONL:          func(m string) eventParser { return &piParser{model: m} },
}

// newPreset builds the invocation of a preset from the config. agent.command, when set, replaces the
// program (say "npx -y @openai/codex@0.169.0"), and is run by sh with the preset's arguments after it.
func newPreset(p preset.Preset, cfg config.Agent) (*Preset, error) {
	if err := preset.Check(p); err != nil {
		return nil, err
	}
	if _, ok := parsers[p.Stream]; !ok {
		return nil, fmt.Errorf("preset %q prints %q, which ralph has no parser for", p.Name, p.Stream)
	}
	args := p.Args(preset.Settings{Model: cfg.Model, MaxTurns: cfg.MaxTurns, MaxCost: cfg.MaxCost})
	args = append(args, cfg.Args...)
	argv := append([]string{p.Program}, args...)
	if cfg.Command != "" {
		argv = append([]string{"sh", "-c", cfg.Command + ` "$@"`, "sh"}, args...)
	}
	return &Preset{Name: p.Name, Argv: argv, Limits: limits{MaxTurns: cfg.MaxTurns, MaxCost: cfg.MaxCost}, Model: cfg.Model}, nil
}

// Run runs the CLI like [Command.Run] does a command.
func (p *Preset) Run(ctx context.Context, inv Invocation) (Result, error) {
	d, ok := preset.Lookup(p.Name)
	if !ok {
		return Result{}, fmt.Errorf("unknown agent preset %q (want %s)", p.Name, strings.Join(preset.Names(), ", "))
	}
	if err := preset.Check(d); err != nil {
		return Result{}, err
	}
	newParser, ok := parsers[d.Stream]
	if !ok {
		return Result{}, fmt.Errorf("preset %q prints %q, which ralph has no parser for", d.Name, d.Stream)
	}
	argv, lim := p.Argv, p.Limits
	var gatewayHome []preset.File
	if d.InBoundary != nil && inv.Boundary != nil && inv.Boundary.Enforced() {
		argv = d.InBoundary(argv)
	}
	if g := inv.Gateway; g != nil {
		// The gateway meters the cost and refuses requests past agent.max_cost itself: the CLI's own
		// claim of its cost would be a second limit, counted otherwise.
		argv, lim.MaxCost = withoutFlag(argv, "--max-budget-usd"), 0
		pg := preset.Gateway{URL: g.URL, Key: g.Key, KeyVar: EnvGatewayKey, Model: p.Model, WebSearch: slices.Contains(g.ServerTools, gateway.WebSearch),
			URLs: map[string]string{string(g.Vendor): g.URL}}
		// The preset's other vendors are served under /<vendor>, or refused there when ralph holds no key
		// for them: the CLI is pointed at the gateway for each, never at the vendor.
		for _, v := range append([]string{d.Vendor}, d.More...) {
			if v != string(g.Vendor) {
				pg.URLs[v] = g.URL + "/" + v
			}
		}
		if d.GatewayArgs != nil {
			argv = append(argv, d.GatewayArgs(pg)...)
		}
		if d.GatewayHome != nil {
			gatewayHome = d.GatewayHome(pg)
		}
		if d.GatewayEnv != nil {
			withEnv := *g
			withEnv.presetEnv = d.GatewayEnv(pg)
			inv.Gateway = &withEnv
		}
	}
	if d.PromptArg != "" {
		if len(inv.Prompt) >= maxArg {
			return Result{}, fmt.Errorf("the prompt is %d bytes, and %s takes it as one argument, which Linux limits to %d bytes: shorten the issue, or use a preset that reads its prompt from stdin", len(inv.Prompt), d.Title, maxArg)
		}
		argv = append(argv, d.PromptArg, inv.Prompt)
	}
	if err := writeHome(d, inv); err != nil {
		return Result{}, fmt.Errorf("preparing the agent's HOME for %s: %w", d.Title, err)
	}
	if err := replaceInHome(gatewayHome, inv); err != nil {
		return Result{}, fmt.Errorf("pointing %s at ralph's model gateway: %w", d.Title, err)
	}
	return process{argv: argv, grace: p.Grace, parser: newParser(p.Model), limits: lim, inActions: p.InActions}.run(ctx, inv)
}

// writeHome writes the files the preset needs in the agent's HOME (preset.Preset.Home) when the agent runs
// with the gateway or has the preset's first key variable, unless the HOME already has them; they are the
// agent's (the boundary's user, or else the HOME's owner), as the rest of its HOME is.
func writeHome(d preset.Preset, inv Invocation) error {
	if len(d.Home) == 0 || len(d.KeyVars) == 0 {
		return nil
	}
	var home string
	hasKey := inv.Gateway != nil
	for _, kv := range inv.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME":
			home = v
		case d.KeyVars[0]:
			hasKey = hasKey || v != ""
		}
	}
	if home == "" || !hasKey {
		return nil
	}
	home = filepath.Clean(home)
	info, err := os.Stat(home)
	if err != nil {
		return err
	}
	uid, gid, chown := -1, -1, false
	if inv.Boundary != nil {
		uid, gid, chown = inv.Boundary.Agent()
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !chown && ok && int(st.Uid) != os.Geteuid() {
		uid, gid, chown = int(st.Uid), int(st.Gid), true
	}
	for _, f := range d.Home {
		file := filepath.Join(home, f.Path)
		if _, err := os.Lstat(file); err == nil {
			continue
		}
		var made []string
		for dir := filepath.Dir(file); dir != home && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if _, err := os.Lstat(dir); err != nil {
				made = append(made, dir)
			}
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(f.Content), 0o600); err != nil {
			return err
		}
		if chown {
			for _, p := range append(made, file) {
				if err := os.Lchown(p, uid, gid); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// replaceInHome writes files in the agent's HOME in place of whatever is there (preset.Preset.GatewayHome):
// through an os.Root of the HOME, so that nothing an earlier agent left there (a symlink out of it, say)
// leads the write anywhere else, and each file is removed and created anew rather than written through.
// They are the agent's, as the rest of its HOME is.
func replaceInHome(files []preset.File, inv Invocation) error {
	if len(files) == 0 {
		return nil
	}
	home := Getenv(inv.Env, "HOME")
	if home == "" {
		return fmt.Errorf("the agent has no HOME to write %s in", files[0].Path)
	}
	root, err := os.OpenRoot(home)
	if err != nil {
		return err
	}
	defer root.Close()
	uid, gid, chown := -1, -1, false
	if inv.Boundary != nil {
		uid, gid, chown = inv.Boundary.Agent()
	}
	if info, err := root.Stat("."); err == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); !chown && ok && int(st.Uid) != os.Geteuid() {
			uid, gid, chown = int(st.Uid), int(st.Gid), true
		}
	}
	for _, f := range files {
		rel := filepath.FromSlash(f.Path)
		var dirs []string
		for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
			dirs = append([]string{dir}, dirs...)
		}
		for _, dir := range dirs {
			if err := root.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
			if chown {
				if err := root.Lchown(dir, uid, gid); err != nil {
					return err
				}
			}
		}
		if err := root.RemoveAll(rel); err != nil {
			return err
		}
		w, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = w.WriteString(f.Content)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if chown {
			if err := root.Lchown(rel, uid, gid); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxArg is Linux's limit on one argument's length (MAX_ARG_STRLEN), with its terminating NUL.
const maxArg = 128 * 1024

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
