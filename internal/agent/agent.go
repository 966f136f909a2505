// Package agent runs the AI coding agent as a subprocess that follows ralph's
// agent protocol: the prompt on stdin and in RALPH_PROMPT_FILE, RALPH_* variables,
// an environment without ralph's credentials, a timeout, and streamed output.
package agent

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// Invocation is one run of the agent for one step.
type Invocation struct {
	Command  string // RALPH_COMMAND: triage, research, plan, review, implement or self-review
	Issue    int    // RALPH_ISSUE
	Artifact string // RALPH_ARTIFACT: absolute path of the document to write; "" for implement
	Phase    int    // RALPH_PHASE (implement only; 0 = unset)
	Phases   int    // RALPH_PHASES (implement only; 0 = unset)
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

// Usage is what an agent CLI reported about one run: model turns, tokens and cost, and whether a limit
// stopped it. Fields a CLI does not report stay zero.
type Usage struct {
	Turns        int     `json:"turns,omitempty"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	Model        string  `json:"model,omitempty"`
	// HitTurnLimit: the agent stopped at agent.max_turns; what it produced is kept.
	HitTurnLimit bool `json:"hit_turn_limit,omitempty"`
	// OverBudget: the reported cost went over agent.max_cost and the agent was stopped.
	OverBudget bool `json:"over_budget,omitempty"`
}

// Add sums two runs' usage (for a total); the model is the later one's when it has one.
func (u Usage) Add(v Usage) Usage {
	u.Turns += v.Turns
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
	if v.Model != "" {
		u.Model = v.Model
	}
	u.HitTurnLimit = u.HitTurnLimit || v.HitTurnLimit
	u.OverBudget = u.OverBudget || v.OverBudget
	return u
}

// String is one line for logs and comments: "2 turns, 2,000 in / 100 out tokens, $0.0100 (model)".
func (u Usage) String() string {
	s := fmt.Sprintf("%d turn%s, %s in / %s out tokens", u.Turns, plural(u.Turns), thousands(u.InputTokens), thousands(u.OutputTokens))
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
	}
	if u.Model != "" {
		s += " (" + u.Model + ")"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func thousands(n int) string {
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

// New returns the Runner for the configured agent: the command preset, or a preset wrapping the Claude
// Code, Codex or Gemini CLI.
func New(cfg config.Agent) (Runner, error) {
	switch cfg.Preset {
	case "command":
		if cfg.Command == "" {
			return nil, fmt.Errorf("agent.preset command needs agent.command, the shell command that runs the agent")
		}
		return &Command{Shell: cfg.Command}, nil
	case "claude", "codex", "gemini":
		return newPreset(cfg), nil
	default:
		return nil, fmt.Errorf("unknown agent preset %q (want command, claude, codex or gemini)", cfg.Preset)
	}
}
