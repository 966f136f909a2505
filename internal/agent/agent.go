// Package agent runs the AI coding agent as a subprocess that follows ralph's
// agent protocol: the prompt on stdin and in RALPH_PROMPT_FILE, RALPH_* variables,
// an environment without ralph's credentials, a timeout, and streamed output.
package agent

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Invocation is one run of the agent for one step.
type Invocation struct {
	Command  string // RALPH_COMMAND: triage, research, plan, review, implement, self-review or fix
	Issue    int    // RALPH_ISSUE
	Artifact string // RALPH_ARTIFACT: absolute path of the document to write; "" for implement
	Phase    int    // RALPH_PHASE (implement and fix only; 0 = unset)
	Phases   int    // RALPH_PHASES (implement and fix only; 0 = unset)
	Dir      string // the worktree, the process's working directory
	// Prompt is given on stdin and in a temporary file outside Dir named by
	// RALPH_PROMPT_FILE, which is removed afterwards.
	Prompt string
	// TempDir is the agent's TMPDIR, where the prompt file is written readable by all, so that an
	// agent running as another user can read it; "" writes it, private, in ralph's own.
	TempDir string
	Env     []string // base environment, already filtered by Environ
	Timeout time.Duration
	Output  io.Writer // the agent's stdout and stderr, streamed as they come
	// Boundary confines the agent's processes and kills what they leave; nil runs the agent directly.
	Boundary *sandbox.Boundary
	// Gateway is ralph's model gateway for this run: the agent reaches its model there, with the
	// gateway's key, and never holds the model key itself (gateway.go). nil: the agent reaches its model
	// itself.
	Gateway *Gateway
}

// Result is how a run of the agent ended.
type Result struct {
	ExitCode    int // -1 when the process was killed by a signal
	Duration    time.Duration
	TimedOut    bool
	Interrupted bool   // the context was cancelled
	Tail        string // the last 4 KiB or so of the output, for failure comments
	// Usage is what the agent reported of its work and cost; nil when it reports nothing (the command preset).
	Usage *Usage
}

// Usage is what one run of the agent used: model turns, tokens and cost, and whether a limit stopped it.
// With ralph's model gateway, the requests, tokens and cost are what the gateway metered (Metered); without
// it, what the CLI reported of itself. Fields nobody reports stay zero.
type Usage struct {
	Turns int `json:"turns,omitempty"`
	// Requests are the model requests the gateway forwarded.
	Requests int `json:"requests,omitempty"`
	// InputTokens counts every prompt token, those the vendor's cache served (CacheReadTokens) or stored
	// (CacheWriteTokens) included; OutputTokens every generated one, reasoning included.
	InputTokens      int     `json:"input_tokens,omitempty"`
	CacheReadTokens  int     `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int     `json:"cache_write_tokens,omitempty"`
	OutputTokens     int     `json:"output_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	Model            string  `json:"model,omitempty"`
	// Metered: the requests, tokens and cost are ralph's gateway's figures, not the CLI's own claims.
	Metered bool `json:"metered,omitempty"`
	// HitTurnLimit: the agent stopped at agent.max_turns; what it produced is kept.
	HitTurnLimit bool `json:"hit_turn_limit,omitempty"`
	// OverBudget: the reported cost went over agent.max_cost and the agent was stopped (without the gateway).
	OverBudget bool `json:"over_budget,omitempty"`
	// Budget names the budget at which ralph's gateway refused further model requests ("step", "issue",
	// "day"); what the agent produced until then is kept.
	Budget string `json:"budget,omitempty"`
}

// Add sums two runs' usage (for a total); the model is the later one's when it has one.
func (u Usage) Add(v Usage) Usage {
	u.Turns += v.Turns
	u.Requests += v.Requests
	u.InputTokens += v.InputTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
	if v.Model != "" {
		u.Model = v.Model
	}
	u.Metered = u.Metered || v.Metered
	u.HitTurnLimit = u.HitTurnLimit || v.HitTurnLimit
	u.OverBudget = u.OverBudget || v.OverBudget
	if v.Budget != "" {
		u.Budget = v.Budget
	}
	return u
}

// String is one line for logs and comments: "2 turns, 3 requests, 2,000 in (500 cached) / 100 out tokens,
// $0.0100 (model)".
func (u Usage) String() string {
	var parts []string
	if u.Turns > 0 || u.Requests == 0 {
		parts = append(parts, fmt.Sprintf("%d turn%s", u.Turns, Plural(u.Turns)))
	}
	if u.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d model request%s", u.Requests, Plural(u.Requests)))
	}
	s := strings.Join(parts, ", ") + ", " + Thousands(u.InputTokens) + " in"
	if c := u.CacheReadTokens + u.CacheWriteTokens; c > 0 {
		s += " (" + Thousands(c) + " cached)"
	}
	s += " / " + Thousands(u.OutputTokens) + " out tokens"
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
	}
	if u.Model != "" {
		s += " (" + u.Model + ")"
	}
	return s
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Thousands writes n with commas between groups of three digits: 12,345.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// LimitError is an agent that ralph (or the CLI itself) stopped at agent.max_turns or agent.max_cost.
type LimitError struct {
	Usage    Usage
	MaxTurns int
	MaxCost  float64
}

func (e *LimitError) Error() string {
	if e.Usage.OverBudget {
		return fmt.Sprintf("agent stopped: its reported cost $%.4f went over agent.max_cost $%.2f", e.Usage.CostUSD, e.MaxCost)
	}
	return fmt.Sprintf("agent stopped at its turn limit (agent.max_turns: %d)", e.MaxTurns)
}

// Runner runs the agent.
type Runner interface {
	Run(ctx context.Context, inv Invocation) (Result, error)
}

// ExitError is an agent that exited unsuccessfully by itself.
type ExitError struct {
	Code   int    // -1 when killed by a signal
	Signal string // the signal, when killed by one
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return "agent was killed by signal " + e.Signal
	}
	return fmt.Sprintf("agent exited with status %d", e.Code)
}

// New returns the Runner for the configured agent: the command preset, or a preset wrapping one of the
// CLIs of preset.List. getenv reads ralph's own environment (nil: an empty one): GITHUB_ACTIONS=true says
// ralph runs on a runner, where a preset's missing CLI is missing from ralph's image.
func New(cfg config.Agent, getenv func(string) string) (Runner, error) {
	switch cfg.Preset {
	case "command":
		if cfg.Command == "" {
			return nil, fmt.Errorf("agent.preset command needs agent.command, the shell command that runs the agent")
		}
		return &Command{Shell: cfg.Command}, nil
	}
	if p, ok := preset.Lookup(cfg.Preset); ok {
		pr, err := newPreset(p, cfg)
		if err != nil {
			return nil, err
		}
		pr.InActions = inActions(getenv)
		return pr, nil
	}
	return nil, fmt.Errorf("unknown agent preset %q (want command, %s)", cfg.Preset, strings.Join(preset.Names(), ", "))
}

// inActions says whether ralph's environment (getenv; nil: an empty one) is a GitHub Actions runner's.
func inActions(getenv func(string) string) bool {
	return getenv != nil && getenv("GITHUB_ACTIONS") == "true"
}
