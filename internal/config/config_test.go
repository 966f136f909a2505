package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/preset"
)

const file = ".github/ralph.yml"

func TestDefault(t *testing.T) {
	want := Config{
		Review:         ReviewAuto,
		Triage:         false,
		Research:       true,
		SelfReview:     true,
		MaxIterations:  3,
		MaxFailures:    2,
		MaxPhases:      20,
		BaseBranch:     "",
		BranchPrefix:   "ralph/",
		DraftPR:        false,
		Documents:      DocumentsBranch,
		Chain:          true,
		ProtectedPaths: []string{".github/workflows/**", ".github/actions/**", ".claude/**", ".gemini/**", ".codex/**", ".cursor/**", ".mcp.json", ".vscode/**", ".devcontainer/**", ".devcontainer.json", ".husky/**", ".githooks/**", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml"},
		Verify:         []string{},
		Agent:          Agent{Preset: "claude", Timeout: 30 * time.Minute, Env: map[string]string{}, Args: []string{}, Landlock: LandlockAuto},
		Sweep:          Sweep{Max: 5, Matrix: false},
		Split:          Split{Max: 5, Approve: false},
		CI:             CI{MaxFixes: 2},
		LockLease:      time.Hour,
		Gateway:        Gateway{Enabled: true, Prices: map[string]Price{}},
		Network:        Network{Mode: NetworkAllowlist, Allow: []string{}},
	}
	if diff := cmp.Diff(want, Default()); diff != "" {
		t.Errorf("Default() (-want +got):\n%s", diff)
	}

	// Each call must hand out its own slices and maps: the engine may
	// append to them.
	d := Default()
	d.ProtectedPaths[0] = "changed"
	d.Agent.Env["X"] = "y"
	if diff := cmp.Diff(want, Default()); diff != "" {
		t.Errorf("changing one Default() changed the next (-want +got):\n%s", diff)
	}
}

// with returns Default() changed by f, so that each good file's expectation
// lists only what the file changes.
func with(f func(c *Config)) Config {
	c := Default()
	f(&c)
	return c
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Config
	}{
		{"empty file", "", Default()},
		{"only comments", "# ralph settings\n\n# nothing yet\n", Default()},
		{"empty mapping", "{}\n", Default()},
		{"empty document", "---\n", Default()},
		{"null document", "~\n", Default()},
		{
			name: "full file",
			yaml: `# every setting, none at its default
review: interactive
triage: true
research: false
self_review: false
security_review: true
max_iterations: 5
max_failures: 4
max_phases: 8
base_branch: develop
branch_prefix: bot/ralph-
draft_pr: true
documents: separate
chain: false
protected_paths: [".github/workflows/**", "**/*.pem", "go.sum"]
verify:
  - go vet ./...
  - go test ./...
agent:
  preset: command
  command: "my-agent --yes"
  timeout: 1h30m
  env:
    ANTHROPIC_API_KEY: ""
    LOG_LEVEL: debug
sweep:
  max: 10
  matrix: true
split:
  max: 3
  approve: true
ci:
  max_fixes: 4
allowed_bots: ["renovate[bot]"]
lock_lease: 90m
gateway:
  enabled: true
  vendor: anthropic
  upstream: https://llm.example.com/anthropic
  prices:
    my-model: {input: 2, output: 8, cache_read: 0.2, cache_write: 2.5}
    free-model: {input: 0, output: 0}
budget:
  issue: 20
  day: 100.5
network:
  mode: open
  allow: [registry.example.com, "*.corp.example", "10.0.0.5:8080", "[2001:db8::1]:8443"]
  require_kernel: true
`,
			want: Config{
				Review:         ReviewInteractive,
				Triage:         true,
				Research:       false,
				SelfReview:     false,
				SecurityReview: true,
				MaxIterations:  5,
				MaxFailures:    4,
				MaxPhases:      8,
				BaseBranch:     "develop",
				BranchPrefix:   "bot/ralph-",
				DraftPR:        true,
				Documents:      DocumentsSeparate,
				Chain:          false,
				ProtectedPaths: []string{".github/workflows/**", "**/*.pem", "go.sum"},
				Verify:         []string{"go vet ./...", "go test ./..."},
				Agent: Agent{
					Preset:   "command",
					Command:  "my-agent --yes",
					Timeout:  90 * time.Minute,
					Env:      map[string]string{"ANTHROPIC_API_KEY": "", "LOG_LEVEL": "debug"},
					Args:     []string{},
					Landlock: LandlockAuto,
				},
				Sweep:       Sweep{Max: 10, Matrix: true},
				Split:       Split{Max: 3, Approve: true},
				CI:          CI{MaxFixes: 4},
				AllowedBots: []string{"renovate[bot]"},
				LockLease:   90 * time.Minute,
				Gateway: Gateway{Enabled: true, Vendor: "anthropic", Upstream: "https://llm.example.com/anthropic", Prices: map[string]Price{
					"my-model":   {Input: 2, Output: 8, CacheRead: 0.2, CacheWrite: 2.5},
					"free-model": {},
				}},
				Budget:  Budget{Issue: 20, Day: 100.5},
				Network: Network{Mode: NetworkOpen, Allow: []string{"registry.example.com", "*.corp.example", "10.0.0.5:8080", "[2001:db8::1]:8443"}, RequireKernel: true},
			},
		},
		{
			name: "budgets per step, per issue and per day, with any preset",
			yaml: "agent:\n  preset: codex\n  max_cost: 2.5\n  max_tokens: 2000000\nbudget:\n  issue: 10\n  day: 50\ngateway:\n  prices:\n    gpt-5.1-codex: {input: 1, output: 9}\n",
			want: with(func(c *Config) {
				c.Agent.Preset, c.Agent.MaxCost, c.Agent.MaxTokens = "codex", 2.5, 2000000
				c.Budget = Budget{Issue: 10, Day: 50}
				c.Gateway.Prices = map[string]Price{"gpt-5.1-codex": {Input: 1, Output: 9, CacheRead: 1, CacheWrite: 1}}
			}),
		},
		{
			name: "server tools allowed, and priced per use",
			yaml: "gateway:\n  server_tools: [web_search, mcp]\n  prices:\n    claude-sonnet-4-5: {input: 3, output: 15, web_search: 8}\n",
			want: with(func(c *Config) {
				c.Gateway.ServerTools = []string{"web_search", "mcp"}
				c.Gateway.Prices = map[string]Price{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 3, CacheWrite: 3, Calls: map[string]float64{"web_search": 8}}}
			}),
		},
		{
			name: "beta features allowed",
			yaml: "gateway:\n  betas: [context-1m-2025-08-07, responses=v1]\n",
			want: with(func(c *Config) { c.Gateway.Betas = []string{"context-1m-2025-08-07", "responses=v1"} }),
		},
		{
			name: "without the gateway, Claude Code's own cost",
			yaml: "gateway:\n  enabled: false\nagent:\n  max_cost: 1\n  env:\n    ANTHROPIC_API_KEY: \"\"\n    ANTHROPIC_BASE_URL: \"\"\n",
			want: with(func(c *Config) {
				c.Gateway.Enabled, c.Agent.MaxCost = false, 1
				c.Agent.Env = map[string]string{"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
			}),
		},
		{
			name: "without the gateway, pi's own cost",
			yaml: "gateway:\n  enabled: false\nagent:\n  preset: pi\n  max_cost: 1\n",
			want: with(func(c *Config) { c.Gateway.Enabled, c.Agent.Preset, c.Agent.MaxCost = false, "pi", 1 }),
		},
		{
			name: "a preset's model, turns, arguments and cost",
			yaml: "agent:\n  preset: claude\n  model: claude-sonnet-4-5\n  max_turns: 40\n  args: [\"--effort\", high]\n  max_cost: 2.5\n",
			want: func() Config {
				c := Default()
				c.Agent.Model, c.Agent.MaxTurns, c.Agent.Args, c.Agent.MaxCost = "claude-sonnet-4-5", 40, []string{"--effort", "high"}, 2.5
				return c
			}(),
		},
		{
			name: "landlock required",
			yaml: "agent:\n  preset: command\n  command: my-agent\n  landlock: required\n",
			want: func() Config {
				c := Default()
				c.Agent.Preset, c.Agent.Command, c.Agent.Landlock = "command", "my-agent", LandlockRequired
				return c
			}(),
		},
		{
			name: "the SPEC example",
			yaml: `review: auto              # skip | auto | interactive
triage: false
research: true
self_review: true
max_iterations: 3         # plan or self-review send-backs before Human Needed
max_failures: 2           # consecutive failures of one step before Human Needed
base_branch: ""           # default: the repository's default branch
branch_prefix: ralph/
draft_pr: false
chain: true
protected_paths: [".github/workflows/**"]
verify:                   # commands run after each phase, in the worktree; all must pass
  - go test ./...
agent:
  preset: claude          # claude | codex | gemini | command
  command: ""             # for preset: command, e.g. "my-agent --yes"
  timeout: 30m
  env: {}                 # extra environment for the agent (names of secrets to pass through)
sweep:
  max: 5
  matrix: false           # true: a sweep only outputs ` + "`issues`" + ` for a matrix job
`,
			want: with(func(c *Config) {
				c.Verify = []string{"go test ./..."}
				c.ProtectedPaths = []string{".github/workflows/**"}
			}),
		},
		{
			name: "partial overlay keeps the other defaults",
			yaml: "review: skip\nagent:\n  timeout: 90s\nsweep:\n  matrix: true\n",
			want: with(func(c *Config) {
				c.Review = ReviewSkip
				c.Agent.Timeout = 90 * time.Second
				c.Sweep.Matrix = true
			}),
		},
		{
			name: "a list replaces the default whole",
			yaml: "protected_paths: [secrets/**]\n",
			want: with(func(c *Config) { c.ProtectedPaths = []string{"secrets/**"} }),
		},
		{
			name: "empty values",
			yaml: "protected_paths: []\nverify:\nbase_branch:\nagent:\n  env:\nsweep:\n",
			want: with(func(c *Config) { c.ProtectedPaths = []string{} }),
		},
		{
			name: "env values that YAML reads as numbers or booleans stay text",
			yaml: "agent:\n  env:\n    DEBUG: 1\n    COLOR: false\n    PASS_ME:\n",
			want: with(func(c *Config) {
				c.Agent.Env = map[string]string{"DEBUG": "1", "COLOR": "false", "PASS_ME": ""}
			}),
		},
		{
			name: "anchors and aliases",
			yaml: "verify: &checks\n  - make test\nagent:\n  timeout: &t 45m\n",
			want: with(func(c *Config) {
				c.Verify = []string{"make test"}
				c.Agent.Timeout = 45 * time.Minute
			}),
		},
		{
			name: "an alias as a value",
			yaml: "max_iterations: &n 4\nmax_failures: *n\n",
			want: with(func(c *Config) { c.MaxIterations, c.MaxFailures = 4, 4 }),
		},
		{
			name: "booleans in any YAML 1.2 case, numbers in any base",
			yaml: "triage: True\nchain: FALSE\nmax_failures: 0x10\n",
			want: with(func(c *Config) { c.Triage, c.Chain, c.MaxFailures = true, false, 16 }),
		},
		{
			name: "each preset",
			yaml: "agent: {preset: gemini, timeout: 2h}\n",
			want: with(func(c *Config) { c.Agent.Preset, c.Agent.Timeout = "gemini", 2*time.Hour }),
		},
		{
			name: "codex preset",
			yaml: "agent:\n  preset: codex\n",
			want: with(func(c *Config) { c.Agent.Preset = "codex" }),
		},
		{
			name: "empty branch prefix",
			yaml: "branch_prefix: ''\n",
			want: with(func(c *Config) { c.BranchPrefix = "" }),
		},
		{
			name: "branch prefix and base with dots, dashes and slashes",
			yaml: "branch_prefix: team.a/ralph-\nbase_branch: release/v1.2\n",
			want: with(func(c *Config) { c.BranchPrefix, c.BaseBranch = "team.a/ralph-", "release/v1.2" }),
		},
		{
			name: "the workflow the chain dispatches",
			yaml: "workflow: ralph.yml\n",
			want: with(func(c *Config) { c.Workflow = "ralph.yml" }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(file, []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name         string
		yaml         string
		line, column int
		key          string
		msg          string
	}{
		{
			name: "unknown key under agent, with a suggestion and the known keys",
			yaml: "review: auto\n\nagent:\n  timout: 5m\n",
			line: 4, column: 3, key: "agent.timout",
			msg: `unknown key, did you mean "timeout"? (known keys under agent: preset, command, timeout, env, model, max_turns, args, max_cost, max_tokens, landlock)`,
		},
		{
			name: "unknown top-level key with nothing close",
			yaml: "labels: [a]\n",
			line: 1, column: 1, key: "labels",
			msg: "unknown key (known top-level keys: review, triage, research, self_review, security_review, max_iterations, max_failures, max_phases, base_branch, branch_prefix, draft_pr, documents, chain, workflow, protected_paths, verify, agent, sweep, split, ci, allowed_bots, lock_lease, project, gateway, budget, network)",
		},
		{
			name: "workflow is a path, not a file name",
			yaml: "workflow: .github/workflows/ralph.yml\n",
			line: 1, column: 11, key: "workflow",
			msg: `".github/workflows/ralph.yml" is not a workflow file's name: name the file in .github/workflows, e.g. ralph.yml`,
		},
		{
			name: "network mode not a choice",
			yaml: "network:\n  mode: closed\n",
			line: 2, column: 9, key: "network.mode", msg: "must be one of allowlist|open",
		},
		{
			name: "network allow entry with a path",
			yaml: "network:\n  allow: [example.com, \"example.com/x\"]\n",
			line: 2, column: 24, key: "network.allow[1]", msg: "is not a host name",
		},
		{
			name: "network allow wildcard over a top-level domain",
			yaml: "network:\n  allow: [\"*.com\"]\n",
			line: 2, column: 11, key: "network.allow[0]", msg: "wildcard over a top-level domain",
		},
		{
			name: "network allow wildcard in the middle",
			yaml: "network:\n  allow: [\"a.*.com\"]\n",
			line: 2, column: 11, key: "network.allow[0]", msg: "wildcard only as its first label",
		},
		{
			name: "network allow port out of range",
			yaml: "network:\n  allow: [\"example.com:70000\"]\n",
			line: 2, column: 11, key: "network.allow[0]", msg: "a port is a number from 1 to 65535",
		},
		{
			name: "network registries names a host of its own",
			yaml: "network:\n  registries: [\"proxy.golang.org\", \"evil.example\"]\n",
			line: 2, column: 36, key: "network.registries[1]", msg: "a host of your own goes in network.allow",
		},
		{
			name: "network require_kernel not a boolean",
			yaml: "network:\n  require_kernel: yes\n",
			line: 2, column: 19, key: "network.require_kernel", msg: "must be true or false",
		},
		{
			name: "dash instead of underscore",
			yaml: "self-review: false\n",
			line: 1, column: 1, key: "self-review", msg: `did you mean "self_review"?`,
		},
		{
			name: "camel case",
			yaml: "draftPR: true\n",
			line: 1, column: 1, key: "draftPR", msg: `did you mean "draft_pr"?`,
		},
		{
			name: "transposed letters",
			yaml: "reveiw: auto\n",
			line: 1, column: 1, key: "reveiw", msg: `did you mean "review"?`,
		},
		{
			name: "shouting",
			yaml: "SELF_REVIEW: false\n",
			line: 1, column: 1, key: "SELF_REVIEW", msg: `did you mean "self_review"?`,
		},
		{
			name: "a short key two edits away is no misspelling",
			yaml: "sweep:\n  min: 1\n",
			line: 2, column: 3, key: "sweep.min", msg: "unknown key (known keys under sweep: max, matrix)",
		},
		{
			name: "allowed_bots entry that is not a bot",
			yaml: "allowed_bots:\n  - mona\n",
			line: 2, column: 5, key: "allowed_bots[0]", msg: `"mona" is not a bot login`,
		},
		{
			name: "unknown key under sweep",
			yaml: "sweep:\n  maximum: 3\n",
			line: 2, column: 3, key: "sweep.maximum", msg: "(known keys under sweep: max, matrix)",
		},
		{
			name: "wrong type: a word for a number",
			yaml: "max_failures: two\n",
			line: 1, column: 15, key: "max_failures", msg: `must be a whole number, not "two"`,
		},
		{
			name: "wrong type: a fraction",
			yaml: "max_iterations: 2.5\n",
			line: 1, column: 17, key: "max_iterations", msg: "must be a whole number",
		},
		{
			name: "wrong type: a number too large",
			yaml: "sweep:\n  max: 99999999999999999999999\n",
			line: 2, column: 8, key: "sweep.max", msg: "must be a whole number",
		},
		{
			name: "wrong type: yes is not a boolean",
			yaml: "draft_pr: yes\n",
			line: 1, column: 11, key: "draft_pr", msg: `must be true or false, not "yes"`,
		},
		{
			name: "wrong type: quoted boolean",
			yaml: "chain: \"true\"\n",
			line: 1, column: 8, key: "chain", msg: "must be true or false",
		},
		{
			name: "wrong type: empty boolean",
			yaml: "triage:\nresearch: true\n",
			line: 1, column: 8, key: "triage", msg: "must be true or false, not empty",
		},
		{
			name: "wrong type: list for a string",
			yaml: "base_branch: [main]\n",
			line: 1, column: 14, key: "base_branch", msg: "must be a string, not a list",
		},
		{
			name: "wrong type: a string for a list",
			yaml: "verify: go test ./...\n",
			line: 1, column: 9, key: "verify", msg: "must be a list",
		},
		{
			name: "wrong type: a mapping in a list",
			yaml: "verify:\n  - go test\n  - {run: make}\n",
			line: 3, column: 5, key: "verify[1]", msg: "must be a string, not a mapping",
		},
		{
			name: "empty verify command",
			yaml: "verify:\n  - go test\n  - \"  \"\n",
			line: 3, column: 5, key: "verify[1]", msg: "must be a command",
		},
		{
			name: "null list item",
			yaml: "verify:\n  -\n",
			line: 2, column: 4, key: "verify[0]", msg: "must not be empty",
		},
		{
			name: "wrong type: agent is a string",
			yaml: "agent: claude\n",
			line: 1, column: 8, key: "agent", msg: "must be a mapping with the keys preset, command, timeout, env",
		},
		{
			name: "wrong type: sweep is a number",
			yaml: "sweep: 5\n",
			line: 1, column: 8, key: "sweep", msg: "must be a mapping with the keys max, matrix",
		},
		{
			name: "bad review mode",
			yaml: "review: sometimes\n",
			line: 1, column: 9, key: "review", msg: `must be one of skip|auto|interactive, not "sometimes"`,
		},
		{
			name: "bad documents mode",
			yaml: "documents: pr\n",
			line: 1, column: 12, key: "documents", msg: `must be one of branch|separate, not "pr"`,
		},
		{
			name: "review mode is case-sensitive",
			yaml: "review: Auto\n",
			line: 1, column: 9, key: "review", msg: "skip|auto|interactive",
		},
		{
			name: "a list for a choice",
			yaml: "review: [auto]\n",
			line: 1, column: 9, key: "review", msg: "skip|auto|interactive, not a list",
		},
		{
			name: "bad preset",
			yaml: "agent:\n  preset: aider\n",
			line: 2, column: 11, key: "agent.preset", msg: `must be one of claude|codex|gemini|`,
		},
		{
			name: "preset command without a command points at the preset",
			yaml: "agent:\n  preset: command\n  timeout: 5m\n",
			line: 2, column: 11, key: "agent.command", msg: `must be set when agent.preset is "command"`,
		},
		{
			name: "preset command with an empty command points at the command",
			yaml: "agent:\n  command: \"\"\n  preset: command\n",
			line: 2, column: 12, key: "agent.command", msg: `must be set when agent.preset is "command"`,
		},
		{
			name: "max_turns zero",
			yaml: "agent:\n  max_turns: 0\n",
			line: 2, column: 14, key: "agent.max_turns", msg: "must be at least 1, not 0",
		},
		{
			name: "args not a list",
			yaml: "agent:\n  args: --verbose\n",
			line: 2, column: 9, key: "agent.args", msg: "must be a list",
		},
		{
			name: "max_cost in words",
			yaml: "agent:\n  max_cost: five dollars\n",
			line: 2, column: 13, key: "agent.max_cost", msg: `must be an amount in US dollars such as 2.50, not "five dollars"`,
		},
		{
			name: "landlock off is not a choice",
			yaml: "agent:\n  landlock: off\n",
			line: 2, column: 13, key: "agent.landlock", msg: "auto",
		},
		{
			name: "max_cost zero",
			yaml: "agent:\n  max_cost: 0\n",
			line: 2, column: 13, key: "agent.max_cost", msg: "must be more than zero",
		},
		{
			name: "max_cost with a CLI that reports no cost, without the gateway",
			yaml: "agent:\n  preset: codex\n  max_cost: 2.5\ngateway:\n  enabled: false\n",
			line: 3, column: 3, key: "agent.max_cost", msg: "cannot be enforced with preset codex without ralph's model gateway",
		},
		{
			name: "max_cost with a command that does not use the gateway",
			yaml: "agent:\n  preset: command\n  command: my-agent\n  max_cost: 2.5\n",
			line: 4, column: 3, key: "agent.max_cost", msg: "set gateway.vendor",
		},
		{
			name: "a day's budget without the gateway",
			yaml: "budget:\n  day: 10\ngateway:\n  enabled: false\n",
			line: 2, column: 3, key: "budget.day", msg: "needs ralph's model gateway",
		},
		{
			name: "an issue's budget with a command that does not use the gateway",
			yaml: "agent:\n  preset: command\n  command: x\nbudget:\n  issue: 10\n",
			line: 5, column: 3, key: "budget.issue", msg: "set gateway.vendor",
		},
		{
			name: "max_tokens without the gateway",
			yaml: "gateway: {enabled: false}\nagent:\n  max_tokens: 1000\n",
			line: 3, column: 3, key: "agent.max_tokens", msg: "needs ralph's model gateway",
		},
		{
			name: "budget zero",
			yaml: "budget:\n  issue: 0\n",
			line: 2, column: 10, key: "budget.issue", msg: "must be more than zero",
		},
		{
			name: "unknown budget",
			yaml: "budget:\n  week: 3\n",
			line: 2, column: 3, key: "budget.week", msg: "known keys under budget: issue, day",
		},
		{
			name: "a vendor that is not the preset's",
			yaml: "gateway:\n  vendor: openai\n",
			line: 2, column: 3, key: "gateway.vendor", msg: "preset claude speaks anthropic",
		},
		{
			name: "an unknown vendor",
			yaml: "gateway:\n  vendor: mistral\n",
			line: 2, column: 11, key: "gateway.vendor", msg: "must be one of anthropic|openai|gemini",
		},
		{
			name: "an upstream that is not a URL",
			yaml: "gateway:\n  upstream: api.anthropic.com\n",
			line: 2, column: 13, key: "gateway.upstream", msg: "is not a URL",
		},
		{
			name: "an upstream with a password",
			yaml: "gateway:\n  upstream: https://me:secret@proxy.example.com\n",
			line: 2, column: 13, key: "gateway.upstream", msg: "must not carry a user or password",
		},
		{
			name: "the base URL handed to the agent while the gateway is on",
			yaml: "agent:\n  env:\n    ANTHROPIC_API_KEY: \"\"\n    ANTHROPIC_BASE_URL: https://proxy\n",
			line: 4, column: 5, key: "agent.env.ANTHROPIC_BASE_URL", msg: "put your endpoint in gateway.upstream",
		},
		{
			name: "a price without output",
			yaml: "gateway:\n  prices:\n    m: {input: 3}\n",
			line: 3, column: 8, key: "gateway.prices.m.output", msg: "must be set",
		},
		{
			name: "a negative price",
			yaml: "gateway:\n  prices:\n    m: {input: -3, output: 1}\n",
			line: 3, column: 16, key: "gateway.prices.m.input", msg: "US dollars per million tokens",
		},
		{
			name: "a server tool ralph does not meter",
			yaml: "gateway:\n  server_tools: [web_search, image_generation]\n",
			line: 2, column: 30, key: "gateway.server_tools[1]", msg: "\"image_generation\" is not a server tool ralph meters: one of web_search, web_fetch, code_execution, file_search, mcp",
		},
		{
			name: "beta features in one string",
			yaml: "gateway:\n  betas: [\"context-1m-2025-08-07,fast-mode-2026-02-01\"]\n",
			line: 2, column: 11, key: "gateway.betas[0]", msg: "is not a beta feature's name: one name each",
		},
		{
			name: "a negative price per use",
			yaml: "gateway:\n  prices:\n    m: {input: 3, output: 1, web_search: -1}\n",
			line: 3, column: 42, key: "gateway.prices.m.web_search", msg: "US dollars per 1,000 uses",
		},
		{
			name: "a price that is not a mapping",
			yaml: "gateway:\n  prices:\n    m: 3\n",
			line: 3, column: 8, key: "gateway.prices.m", msg: "must be a mapping",
		},
		{
			name: "model with preset command",
			yaml: "agent:\n  preset: command\n  command: my-agent\n  model: x\n",
			line: 4, column: 3, key: "agent.model", msg: "applies to the claude, codex, gemini, ",
		},
		{
			name: "timeout without a unit",
			yaml: "agent:\n  timeout: 30\n",
			line: 2, column: 12, key: "agent.timeout", msg: `must be a duration such as 30m, 1h30m or 90s, not "30"`,
		},
		{
			name: "timeout in words",
			yaml: "agent:\n  timeout: half an hour\n",
			line: 2, column: 12, key: "agent.timeout", msg: "must be a duration",
		},
		{
			name: "zero timeout",
			yaml: "agent:\n  timeout: 0s\n",
			line: 2, column: 12, key: "agent.timeout", msg: "must be longer than zero",
		},
		{
			name: "negative timeout",
			yaml: "agent:\n  timeout: -5m\n",
			line: 2, column: 12, key: "agent.timeout", msg: "must be longer than zero",
		},
		{
			name: "max_iterations below 1",
			yaml: "max_iterations: 0\n",
			line: 1, column: 17, key: "max_iterations", msg: "must be at least 1, not 0",
		},
		{
			name: "max_failures below 1",
			yaml: "max_failures: -1\n",
			line: 1, column: 15, key: "max_failures", msg: "must be at least 1",
		},
		{
			name: "split.max below 2",
			yaml: "split:\n  approve: true\n  max: 1\n",
			line: 3, column: 8, key: "split.max", msg: "must be at least 2 (a split makes two sub-issues or more), not 1",
		},
		{
			name: "split.max not a number",
			yaml: "split:\n  max: many\n",
			line: 2, column: 8, key: "split.max", msg: "must be a whole number",
		},
		{
			name: "split.approve not a boolean",
			yaml: "split:\n  approve: maybe\n",
			line: 2, column: 12, key: "split.approve", msg: "must be true or false",
		},
		{
			name: "unknown key under split",
			yaml: "split:\n  limit: 3\n",
			line: 2, column: 3, key: "split.limit", msg: "(known keys under split: max, approve)",
		},
		{
			name: "wrong type: split is a number",
			yaml: "split: 5\n",
			line: 1, column: 8, key: "split", msg: "must be a mapping with the keys max, approve",
		},
		{
			name: "max_phases below 1",
			yaml: "max_phases: 0\n",
			line: 1, column: 13, key: "max_phases", msg: "must be at least 1, not 0",
		},
		{
			name: "sweep.max below 1",
			yaml: "sweep:\n  matrix: true\n  max: 0\n",
			line: 3, column: 8, key: "sweep.max", msg: "must be at least 1",
		},
		{
			name: "duplicate top-level key",
			yaml: "review: auto\ntriage: true\nreview: skip\n",
			line: 3, column: 1, key: "review", msg: "duplicate key (first set on line 1)",
		},
		{
			name: "duplicate nested key",
			yaml: "agent:\n  preset: codex\n  preset: claude\n",
			line: 3, column: 3, key: "agent.preset", msg: "duplicate key (first set on line 2)",
		},
		{
			name: "duplicate env key",
			yaml: "agent:\n  env:\n    A: x\n    A: y\n",
			line: 4, column: 5, key: "agent.env.A", msg: "duplicate key",
		},
		{
			name: "bad glob",
			yaml: "protected_paths:\n  - ok/**\n  - \"secrets/[abc\"\n",
			line: 3, column: 5, key: "protected_paths[1]", msg: "is not a valid glob",
		},
		{
			name: "absolute protected path",
			yaml: "protected_paths: [/etc/**]\n",
			line: 1, column: 19, key: "protected_paths[0]", msg: "without a leading /",
		},
		{
			name: "protected path with a trailing slash",
			yaml: "protected_paths: [docs/]\n",
			line: 1, column: 19, key: "protected_paths[0]", msg: "use dir/** for everything under dir",
		},
		{
			name: "protected path with ..",
			yaml: "protected_paths: [a/../b]\n",
			line: 1, column: 19, key: "protected_paths[0]", msg: `".." segment`,
		},
		{
			name: "branch prefix with a space",
			yaml: "branch_prefix: \"my branch/\"\n",
			line: 1, column: 16, key: "branch_prefix", msg: "space",
		},
		{
			name: "branch prefix with ..",
			yaml: "branch_prefix: a..b/\n",
			line: 1, column: 16, key: "branch_prefix", msg: `".."`,
		},
		{
			name: "branch prefix with a colon",
			yaml: "branch_prefix: \"ralph:\"\n",
			line: 1, column: 16, key: "branch_prefix", msg: `':'`,
		},
		{
			name: "branch prefix with a tilde",
			yaml: "branch_prefix: ralph~\n",
			line: 1, column: 16, key: "branch_prefix", msg: `'~'`,
		},
		{
			name: "branch prefix with a backslash",
			yaml: "branch_prefix: 'ralph\\'\n",
			line: 1, column: 16, key: "branch_prefix", msg: `'\\'`,
		},
		{
			name: "branch prefix with a star",
			yaml: "branch_prefix: \"r*\"\n",
			line: 1, column: 16, key: "branch_prefix", msg: `'*'`,
		},
		{
			name: "branch prefix starting with /",
			yaml: "branch_prefix: /ralph/\n",
			line: 1, column: 16, key: "branch_prefix", msg: `starts with "/"`,
		},
		{
			name: "branch prefix starting with -",
			yaml: "branch_prefix: -ralph\n",
			line: 1, column: 16, key: "branch_prefix", msg: `starts with "-"`,
		},
		{
			name: "branch prefix with a dot part",
			yaml: "branch_prefix: ralph/.hidden/\n",
			line: 1, column: 16, key: "branch_prefix", msg: `starts with "."`,
		},
		{
			name: "branch prefix with a .lock part",
			yaml: "branch_prefix: ralph.lock/\n",
			line: 1, column: 16, key: "branch_prefix", msg: `ends with ".lock"`,
		},
		{
			name: "base branch ending with /",
			yaml: "base_branch: main/\n",
			line: 1, column: 14, key: "base_branch", msg: `ends with "/"`,
		},
		{
			name: "branch prefix with @{",
			yaml: "branch_prefix: a@{b/\n",
			line: 1, column: 16, key: "branch_prefix", msg: `"@{"`,
		},
		{
			name: "branch prefix with //",
			yaml: "branch_prefix: a//b\n",
			line: 1, column: 16, key: "branch_prefix", msg: `"//"`,
		},
		{
			name: "base branch @",
			yaml: "base_branch: \"@\"\n",
			line: 1, column: 14, key: "base_branch", msg: `"@" alone`,
		},
		{
			name: "base branch ending with .",
			yaml: "base_branch: main.\n",
			line: 1, column: 14, key: "base_branch", msg: `ends with "."`,
		},
		{
			name: "base branch ending with .lock",
			yaml: "base_branch: main.lock\n",
			line: 1, column: 14, key: "base_branch", msg: `ends with ".lock"`,
		},
		{
			name: "env name with a dash",
			yaml: "agent:\n  env:\n    MY-KEY: x\n",
			line: 3, column: 5, key: "agent.env.MY-KEY", msg: "not a valid environment variable name",
		},
		{
			name: "env passes the GitHub token through",
			yaml: "agent:\n  env:\n    GITHUB_TOKEN: \"\"\n",
			line: 3, column: 5, key: "agent.env.GITHUB_TOKEN", msg: "GitHub token",
		},
		{
			name: "env value is a list",
			yaml: "agent:\n  env:\n    PATHS: [a, b]\n",
			line: 3, column: 12, key: "agent.env.PATHS", msg: "must be a string, not a list",
		},
		{
			name: "env is a list",
			yaml: "agent:\n  env: [A, B]\n",
			line: 2, column: 8, key: "agent.env", msg: "must be a mapping of variable names",
		},
		{
			name: "top level is a list",
			yaml: "- review: auto\n",
			line: 1, column: 1, key: "", msg: "must be a mapping of settings",
		},
		{
			name: "top level is a string",
			yaml: "\n\nreview auto\n",
			line: 3, column: 1, key: "", msg: "must be a mapping of settings",
		},
		{
			name: "a key that is not a name",
			yaml: "? [a, b]\n: c\n",
			line: 1, column: 3, key: "", msg: "keys must be plain names",
		},
		{
			name: "second document",
			yaml: "review: auto\n---\nreview: skip\n",
			line: 2, column: 1, key: "", msg: "only one YAML document",
		},
		{
			name: "syntax error: bad indentation",
			// yaml.v3 names the line of the mapping it was reading; ralph names
			// the misindented key after it.
			yaml: "review: auto\nagent:\n  preset: claude\n timeout: 5m\n",
			line: 4, column: 2, key: "", msg: "invalid YAML: did not find expected key",
		},
		{
			name: "syntax error: mapping value in a plain scalar",
			yaml: "review: auto\ntriage: a: b\n",
			line: 2, column: 10, key: "", msg: "invalid YAML: mapping values are not allowed",
		},
		{
			name: "syntax error on the first line",
			yaml: "\tfoo: 1\n",
			line: 1, column: 1, key: "", msg: "invalid YAML: found character that cannot start any token",
		},
		{
			name: "syntax error: unclosed quote",
			yaml: "review: auto\nbase_branch: \"main\n",
			line: 2, column: 14, key: "", msg: "invalid YAML: found unexpected end of stream",
		},
		{
			name: "a misspelt key is not also reported missing",
			yaml: "agent:\n  preset: command\n  comand: x\n",
			line: 3, column: 3, key: "agent.comand", msg: `did you mean "command"?`,
		},
		{
			name: "a misspelt price is not also reported missing",
			yaml: "gateway:\n  prices:\n    m: {inptu: 3, output: 1}\n",
			line: 3, column: 9, key: "gateway.prices.m.inptu", msg: `did you mean "input"?`,
		},
		{
			name: "syntax error: an unclosed list",
			// yaml.v3 names line 1, the line before the list's; ralph the first
			// item of the list that is never closed.
			yaml: "review: auto\nverify: [a, b\nmax_phases: 3\n",
			line: 2, column: 10, key: "", msg: "invalid YAML: did not find expected ',' or ']'",
		},
		{
			name: "syntax error: an unknown alias",
			yaml: "review: auto\ntriage: *nope\n",
			line: 2, column: 13, key: "", msg: "invalid YAML: unknown anchor 'nope' referenced",
		},
		{
			name: "syntax error after a character of more than one byte",
			yaml: "base_branch: \"é\"\ntriage: a: b\n",
			line: 2, column: 10, key: "", msg: "invalid YAML: mapping values",
		},
		{
			name: "not UTF-8",
			yaml: "review: auto\nbase_branch: ma\xffin\n",
			line: 2, column: 16, key: "", msg: "not UTF-8",
		},
		{
			name: "control character",
			yaml: "review: auto\n\x01\n",
			line: 2, column: 1, key: "", msg: "control character U+0001",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(file, []byte(tt.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want an *Error", c, err)
			}
			got := Error{File: e.File, Line: e.Line, Column: e.Column, Key: e.Key}
			want := Error{File: file, Line: tt.line, Column: tt.column, Key: tt.key}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %q: place (-want +got):\n%s", err, diff)
			}
			if !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error message %q does not contain %q", e.Msg, tt.msg)
			}
			if diff := cmp.Diff(Config{}, c); diff != "" {
				t.Errorf("Parse returned a config with its error (-want +got):\n%s", diff)
			}
			if n := len(Problems(err)); n != 1 {
				t.Errorf("Parse reported %d problems, want the one:\n%v", n, err)
			}
		})
	}
}

// Every problem in the file is reported at once, each at its line and column, in line order (issue 33):
// a bad value does not hide the ones after it, and a check made after a section is read (model with
// preset command) is listed at its own line, not after the section's other problems.
func TestParseReportsEveryProblem(t *testing.T) {
	t.Parallel()
	yml := "review: sometimes\n" + // 1
		"agent:\n" +
		"  preset: command\n" + // 3
		"  command: my-agent\n" +
		"  model: x\n" + // 5: reported once the section is read
		"  timout: 5m\n" + // 6
		"  timeout: 0s\n" + // 7
		"verify:\n" +
		"  - go test\n" +
		"  - {run: make}\n" + // 10
		"  - \"  \"\n" + // 11
		"max_phases: 0\n" + // 12
		"project: {owner: octo, numbr: 3}\n" // 13
	c, err := Parse(file, []byte(yml))
	if err == nil {
		t.Fatalf("Parse = %+v, nil; want its problems", c)
	}
	var got []string
	for _, e := range Problems(err) {
		got = append(got, fmt.Sprintf("%d:%d %s", e.Line, e.Column, e.Key))
	}
	want := []string{
		"1:9 review",
		"5:3 agent.model",
		"6:3 agent.timout",
		"7:12 agent.timeout",
		"10:5 verify[1]",
		"11:5 verify[2]",
		"12:13 max_phases",
		"13:24 project.numbr",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nerror:\n%v", diff, err)
	}
	// The text has one line per problem, each naming its place, so a person fixes them all in one go.
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) || !strings.HasPrefix(lines[1], file+":5:3: agent.model: applies to") {
		t.Errorf("error text:\n%v\nwant one line per problem, the second at 5:3", err)
	}
	// errors.As still finds a problem, the first, for callers that annotate one place.
	var first *Error
	if !errors.As(err, &first) || first.Line != 1 {
		t.Errorf("errors.As(*Error) = %v, want the problem on line 1", first)
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{
			Error{File: ".github/ralph.yml", Line: 4, Column: 3, Key: "agent.timout", Msg: "unknown key (known keys under agent: preset, command, timeout, env)"},
			".github/ralph.yml:4:3: agent.timout: unknown key (known keys under agent: preset, command, timeout, env)",
		},
		{Error{File: "f.yml", Line: 2, Msg: "invalid YAML: oops"}, "f.yml:2: invalid YAML: oops"},
		{Error{File: "f.yml", Key: "review", Msg: "bad"}, "f.yml: review: bad"},
		{Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestProtected(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{".github/workflows/**"}, ".github/workflows/ci.yml", true},
		{[]string{".github/workflows/**"}, ".github/workflows/a/b.yml", true},
		{[]string{".github/workflows/**"}, ".github/workflows", true},
		{[]string{".github/workflows/**"}, ".github/ralph.yaml", false},
		{[]string{".github/workflows/**"}, ".github/workflows-old/ci.yml", false},
		{[]string{".github/workflows/**"}, "src/.github/workflows/ci.yml", false},
		{[]string{".github/workflows/**"}, "./.github//workflows/ci.yml", true},
		{[]string{".github/workflows/**"}, "/.github/workflows/ci.yml", true},
		{[]string{".github/workflows/**"}, "docs/../.github/workflows/ci.yml", true},
		{[]string{"**/*.pem"}, "key.pem", true},
		{[]string{"**/*.pem"}, "certs/prod/key.pem", true},
		{[]string{"**/*.pem"}, "certs/key.pem.txt", false},
		{[]string{"docs/*.md"}, "docs/a.md", true},
		{[]string{"docs/*.md"}, "docs/a/b.md", false},
		{[]string{"*.pem"}, "a/key.pem", false},
		{[]string{"a/**/z"}, "a/z", true},
		{[]string{"a/**/z"}, "a/b/c/z", true},
		{[]string{"a/**/z"}, "a/b/c/y", false},
		{[]string{"a/**/**/z"}, "a/b/z", true},
		{[]string{"file?.go"}, "file1.go", true},
		{[]string{"file?.go"}, "file10.go", false},
		{[]string{"[ab].txt"}, "b.txt", true},
		{[]string{"[ab].txt"}, "c.txt", false},
		{[]string{"a**"}, "abc", true},
		{[]string{"a**"}, "a/b", false},
		{[]string{"go.mod", "go.sum"}, "go.sum", true},
		{[]string{}, ".github/workflows/ci.yml", false},
		{nil, "anything", false},
		{[]string{"**"}, "", false},
	}
	for _, tt := range tests {
		c := Config{ProtectedPaths: tt.patterns}
		if got := c.Protected(tt.path); got != tt.want {
			t.Errorf("Protected(%q) with %q = %v, want %v", tt.path, tt.patterns, got, tt.want)
		}
	}
	if !Default().Protected(".github/workflows/ralph.yml") {
		t.Error("the default config does not protect the workflows")
	}
}

// TestProtectedManyStars guards against an exponential matcher: this takes
// seconds or more with naive backtracking.
// TestRalphsOwnFilesProtected: ralph's config and prompt templates are protected whatever protected_paths
// says (an empty list included), and so is a config read from another file; the agent is told so.
func TestRalphsOwnFilesProtected(t *testing.T) {
	tests := []struct {
		cfg  Config
		path string
		want string
	}{
		{Config{}, ".github/ralph.yml", ByRalph},
		{Config{ProtectedPaths: []string{}}, "./.github//ralph.yml", ByRalph},
		{Config{}, ".github/ralph/prompts/implement.md", ByRalph},
		{Config{}, ".github/ralph/new/deeper.md", ByRalph},
		{Config{}, ".github/ralph", ByRalph},
		{Config{File: "config/ralph.yml"}, "config/ralph.yml", ByRalph},
		{Config{File: "config/ralph.yml"}, ".github/ralph.yml", ByRalph},
		{Config{ProtectedPaths: []string{".github/**"}}, ".github/ralph.yml", ByRalph},
		{Config{ProtectedPaths: []string{".github/**"}}, ".github/CODEOWNERS", ByProtectedPaths},
		{Config{}, ".github/ralph.yaml", ""},
		{Config{}, ".github/ralphs/x.md", ""},
		{Config{}, "docs/.github/ralph.yml", ""},
		{Config{}, "config/ralph.yml", ""},
	}
	for _, tt := range tests {
		if got := tt.cfg.ProtectedBy(tt.path); got != tt.want {
			t.Errorf("ProtectedBy(%q) with %+v = %q, want %q", tt.path, tt.cfg, got, tt.want)
		}
	}
	got := Config{File: "config/ralph.yml", ProtectedPaths: []string{".github/workflows/**", ".github/ralph.yml"}}.AllProtected()
	want := []string{".github/ralph.yml", ".github/ralph/**", "config/ralph.yml", ".github/workflows/**"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllProtected (-want +got):\n%s", diff)
	}
}

// TestAgentConfigProtected: the paths the running preset's CLI reads as its configuration are protected
// whatever protected_paths says (an empty list included), for that preset only, and the agent is told so;
// each preset's patterns are ones protected_paths would take.
func TestAgentConfigProtected(t *testing.T) {
	opencode := Config{Agent: Agent{Preset: "opencode"}, ProtectedPaths: []string{}}
	copilot := Config{Agent: Agent{Preset: "copilot"}, ProtectedPaths: []string{"docs/**"}}
	tests := []struct {
		cfg  Config
		path string
		want string
	}{
		{opencode, "opencode.json", ByAgent},
		{opencode, "./opencode.jsonc", ByAgent},
		{opencode, ".opencode/plugin/steer.ts", ByAgent},
		{opencode, ".opencode/agent/build.md", ByAgent},
		{opencode, ".github/ralph.yml", ByRalph},
		{opencode, "src/opencode.json", ""},
		{opencode, ".github/agents/x.md", ""},
		{copilot, ".github/copilot-instructions.md", ByAgent},
		{copilot, ".github/agents/reviewer.agent.md", ByAgent},
		{copilot, ".github/instructions/go.instructions.md", ByAgent},
		{copilot, ".github/skills/deploy/SKILL.md", ByAgent},
		{copilot, ".github/hooks/hooks.json", ByAgent},
		{copilot, "docs/x.md", ByProtectedPaths},
		{copilot, "opencode.json", ""},
		{copilot, ".github/CODEOWNERS", ""},
		{Config{Agent: Agent{Preset: "command"}, ProtectedPaths: []string{}}, "opencode.json", ""},
		{Config{Agent: Agent{Preset: "claude"}, ProtectedPaths: []string{}}, ".claude/settings.json", ByAgent},
		{Config{Agent: Agent{Preset: "pi"}, ProtectedPaths: []string{}}, ".pi/settings.json", ByAgent},
		{Config{Agent: Agent{Preset: "pi"}, ProtectedPaths: []string{}}, ".pi/extensions/steer.ts", ByAgent},
		{Config{Agent: Agent{Preset: "pi"}, ProtectedPaths: []string{}}, ".agents/skills/x/SKILL.md", ByAgent},
		{Config{Agent: Agent{Preset: "pi"}, ProtectedPaths: []string{}}, "src/.pi.go", ""},
		{Config{Agent: Agent{Preset: "opencode"}, ProtectedPaths: []string{}}, ".pi/settings.json", ""},
	}
	for _, tt := range tests {
		if got := tt.cfg.ProtectedBy(tt.path); got != tt.want {
			t.Errorf("ProtectedBy(%q) with preset %s and protected_paths %q = %q, want %q", tt.path, tt.cfg.Agent.Preset, tt.cfg.ProtectedPaths, got, tt.want)
		}
	}
	got := opencode.AllProtected()
	want := []string{".github/ralph.yml", ".github/ralph/**", "opencode.json", "opencode.jsonc", ".opencode/**"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllProtected (-want +got):\n%s", diff)
	}
	if got, want := Default().AllProtected(), slices.Concat(RalphPaths, DefaultProtectedPaths); !slices.Equal(got, want) {
		t.Errorf("the default config's AllProtected = %q, want %q (claude's configuration is in the default list)", got, want)
	}
	for _, p := range preset.List() {
		for _, pattern := range p.ConfigPaths {
			if msg := checkPattern(pattern); msg != "" {
				t.Errorf("preset %s: config path %q: %s", p.Name, pattern, msg)
			}
		}
	}
}

func TestProtectedManyStars(t *testing.T) {
	pattern := strings.Repeat("**/", 20) + "x"
	path := strings.Repeat("a/", 40) + "y"
	c := Config{ProtectedPaths: []string{pattern}}
	done := make(chan bool, 1)
	go func() { done <- c.Protected(path) }()
	select {
	case got := <-done:
		if got {
			t.Errorf("Protected(%q) = true, want false", path)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Protected takes too long with many **")
	}
}

// opencode picks its vendor per model: agent.model's provider picks the vendor ralph's gateway serves
// first, the preset's other vendor is served besides, and a provider the gateway does not reach is refused.
func TestOpencodeVendors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model      string
		vendor     string
		more       []string
		wantErrHas string
	}{
		{"", "anthropic", []string{"openai"}, ""},
		{"claude-haiku-4-5", "anthropic", []string{"openai"}, ""},
		{"anthropic/claude-sonnet-4-5", "anthropic", []string{"openai"}, ""},
		{"openai/gpt-5.1-codex", "openai", []string{"anthropic"}, ""},
		{"openrouter/openai/gpt-5", "", nil, `names the provider "openrouter", which opencode does not reach through ralph's model gateway: write anthropic/<model> or openai/<model>`},
	} {
		yml := "agent:\n  preset: opencode\n"
		if tt.model != "" {
			yml += "  model: " + tt.model + "\n"
		}
		c, err := Parse(".github/ralph.yml", []byte(yml))
		if tt.wantErrHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) || !strings.Contains(err.Error(), ":3:") {
				t.Errorf("model %q: err = %v, want one at line 3 saying %s", tt.model, err, tt.wantErrHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("model %q: %v", tt.model, err)
		}
		if got := c.GatewayVendor(); got != tt.vendor {
			t.Errorf("model %q: GatewayVendor = %q, want %q", tt.model, got, tt.vendor)
		}
		if diff := cmp.Diff(tt.more, c.GatewayMore()); diff != "" {
			t.Errorf("model %q: GatewayMore (-want +got):\n%s", tt.model, diff)
		}
	}
	// Other presets stay single-vendor.
	c, err := Parse(".github/ralph.yml", []byte("agent:\n  preset: claude\n  model: openai/gpt-5\n"))
	if err != nil || c.GatewayVendor() != "anthropic" || c.GatewayMore() != nil {
		t.Errorf("claude: %v, vendor %q, more %v", err, c.GatewayVendor(), c.GatewayMore())
	}
}

// gateway.upstreams names each vendor's upstream; the main vendor falls back to gateway.upstream.
func TestGatewayUpstreams(t *testing.T) {
	t.Parallel()
	c, err := Parse(".github/ralph.yml", []byte("agent:\n  preset: opencode\ngateway:\n  upstream: http://127.0.0.1:1/a\n  upstreams:\n    openai: http://127.0.0.1:2/o\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GatewayUpstream("anthropic"); got != "http://127.0.0.1:1/a" {
		t.Errorf("anthropic upstream = %q", got)
	}
	if got := c.GatewayUpstream("openai"); got != "http://127.0.0.1:2/o" {
		t.Errorf("openai upstream = %q", got)
	}
	for yml, want := range map[string]string{
		"gateway:\n  upstreams:\n    mistral: http://x\n":       "mistral",
		"gateway:\n  upstreams:\n    openai: ftp://x\n":         "must be an http or https URL",
		"gateway:\n  upstreams: [http://x]\n":                   "must be a mapping of vendors",
		"gateway:\n  upstreams:\n    openai: http://u:p@x/v1\n": "must not carry a user or password",
	} {
		if _, err := Parse(".github/ralph.yml", []byte(yml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one saying %s", yml, err, want)
		}
	}
}
