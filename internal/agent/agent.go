// Package agent runs the AI coding agent as a subprocess that follows ralph's
// agent protocol: the prompt on stdin and in RALPH_PROMPT_FILE, RALPH_* variables,
// an environment without ralph's credentials, a timeout, and streamed output.
package agent

import (
	"context"
	"fmt"
	"io"
	"time"
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
	Prompt  string
	Env     []string // base environment, already filtered by Environ
	Timeout time.Duration
	Output  io.Writer // the agent's stdout and stderr, streamed as they come
}

// Result is how a run of the agent ended.
type Result struct {
	ExitCode    int // -1 when the process was killed by a signal
	Duration    time.Duration
	TimedOut    bool
	Interrupted bool   // the context was cancelled
	Tail        string // the last 4 KiB or so of the output, for failure comments
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

// PresetUnavailableError is a preset named in the configuration that this
// version of ralph does not provide.
type PresetUnavailableError struct {
	Preset string
}

func (e *PresetUnavailableError) Error() string {
	return fmt.Sprintf("agent preset %q is not built into this version of ralph yet; "+
		"set agent.preset: command and put the CLI's own invocation in agent.command", e.Preset)
}

// New returns the Runner for a configured preset. command is agent.command.
func New(preset, command string) (Runner, error) {
	switch preset {
	case "command":
		if command == "" {
			return nil, fmt.Errorf("agent.preset command needs agent.command, the shell command that runs the agent")
		}
		return &Command{Shell: command}, nil
	case "claude", "codex", "gemini":
		return nil, &PresetUnavailableError{Preset: preset}
	default:
		return nil, fmt.Errorf("unknown agent preset %q (want command, claude, codex or gemini)", preset)
	}
}
