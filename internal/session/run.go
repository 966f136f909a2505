package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Run is one run of the agent: the step's command, the file it writes besides its changes ("": none),
// its phase of the plan (0 of 0: not phased), and its prompt, rendered.
type Run struct {
	Command, Artifact string
	Phase, Phases     int
	Prompt            string
}

// Prepare readies the step's copy ws for the agent: the job's Go build cache seeds the step's.
func (r *Session) Prepare(ws *workspace.Workspace) { r.seedBuildCache(ws) }

// Run runs the agent once on ws, in its boundary, behind ralph's network proxy and model gateway with what
// remains of each budget. A failure is a *StepError: with a *BudgetError when a budget stopped the agent or
// was spent before it ran, with an *AgentFailure when the agent failed.
func (r *Session) Run(ctx context.Context, ws *workspace.Workspace, run Run) error {
	command, artifact, phase, phases, prompt := run.Command, run.Artifact, run.Phase, run.Phases, run.Prompt
	gw, access, err := r.openGateway(ctx, command)
	if err != nil {
		return err
	}
	gatewayURL := ""
	if access != nil {
		gatewayURL = access.URL
	}
	proxy, err := r.openNetwork("the agent", gatewayURL)
	if err != nil {
		if gw != nil {
			_ = gw.Close()
		}
		return err
	}
	boundary, err := r.boundary(ws, ports(proxy, gatewayURL)...)
	if err != nil {
		r.closeNetwork("the agent", proxy)
		if gw != nil {
			_ = gw.Close()
		}
		return err
	}
	fw := r.firewall("the agent", boundary)
	out, end := r.log.Untrusted(fmt.Sprintf("agent: %s for #%d", command, r.issue))
	if m, ok := r.log.(Meterer); ok && gw != nil {
		// What the gateway has metered so far, for a log that shows it while the agent works.
		m.Meter(func() (int, float64) {
			u := gw.Usage()
			return u.Total(), u.CostUSD
		})
	}
	res, err := r.agent.Run(ctx, agent.Invocation{
		Command: command, Issue: r.issue, Artifact: artifact, Phase: phase, Phases: phases,
		Dir: ws.Dir, TempDir: ws.Tmp, Prompt: prompt, Env: proxyEnv(r.agentEnv(ws), proxy), Timeout: r.cfg.Agent.Timeout,
		Output: out, Boundary: boundary, Gateway: access,
	})
	end()
	r.closeFirewall(fw)
	r.closeNetwork("the agent", proxy)
	if gw != nil {
		if stop := r.closeGateway(ctx, command, gw, &res); stop != nil {
			r.notes.Usage(command, res.Usage)
			return &StepError{Step: command, Reason: "the agent was stopped", Err: &BudgetError{Limit: stop.Limit, Spent: *res.Usage}}
		}
	}
	r.notes.Usage(command, res.Usage)
	if err != nil && keepAfterTurnLimit(res) {
		// What the agent produced before its turn limit is checked like any other step's work.
		r.log.Warnf("the agent stopped at its turn limit (agent.max_turns: %d); keeping what it produced", r.cfg.Agent.MaxTurns)
		err = nil
	}
	if err != nil {
		reason := fmt.Sprintf("the agent exited with code %d", res.ExitCode)
		var exit *agent.ExitError
		restated := errors.As(err, &exit) && exit.Signal == ""
		switch {
		case res.Usage != nil && res.Usage.OverBudget:
			reason = fmt.Sprintf("the agent was stopped: the cost it reported ($%.4f) went over agent.max_cost ($%.2f)", res.Usage.CostUSD, r.cfg.Agent.MaxCost)
		case res.TimedOut:
			reason = fmt.Sprintf("the agent timed out after %s (agent.timeout)", r.cfg.Agent.Timeout)
			restated = true
		case res.Interrupted:
			reason = "the run was interrupted while the agent was working"
		case res.ExitCode == 0:
			reason = "the agent could not be run"
		}
		return &StepError{Step: command, Reason: reason, Err: &AgentFailure{Err: err, Tail: res.Tail, Restated: restated}}
	}
	// How long the agent ran is said by the end of its section (Untrusted), once.
	return nil
}

// boundary is the agent's confinement for one step: the door's settings, with the step's copy, HOME and
// TMPDIR as the only places it may write.
func (r *Session) boundary(ws *workspace.Workspace, ports ...int) (*sandbox.Boundary, error) {
	cfg := r.sandbox
	cfg.Writable = append(ws.Writable(), r.sandbox.Writable...)
	// The job's Go module downloads seed the step's module cache (stepCaches): read, never written.
	if dl := jobModuleDownloads(r.baseEnv); dl != "" {
		cfg.ReadOnly = append(slices.Clip(r.sandbox.ReadOnly), dl)
	}
	if r.allowlisted() {
		cfg.Network = &sandbox.Network{Ports: ports, RequireKernel: r.cfg.Network.RequireKernel}
	} else {
		cfg.Network = nil
	}
	b, err := sandbox.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("setting up the agent's boundary: %w", err)
	}
	return b, nil
}

// Verify runs the configured commands in the worktree; all must pass.
// The commands run the agent's code, so they run inside the agent's boundary, and nothing they start
// outlives them.
func (r *Session) Verify(ctx context.Context, ws *workspace.Workspace, phase, phases int) error {
	if len(r.cfg.Verify) == 0 {
		return nil
	}
	proxy, err := r.openNetwork("the verify commands", "")
	if err != nil {
		return err
	}
	defer r.closeNetwork("the verify commands", proxy)
	boundary, err := r.boundary(ws, ports(proxy, "")...)
	if err != nil {
		return err
	}
	defer r.closeFirewall(r.firewall("the verify commands", boundary))
	for _, cmd := range r.cfg.Verify {
		out, end := r.log.Untrusted("verify: " + cmd)
		res, err := (&agent.Command{Shell: cmd}).Run(ctx, agent.Invocation{
			Command: "verify", Issue: r.issue, Phase: phase, Phases: phases, Dir: ws.Dir, TempDir: ws.Tmp,
			Env: proxyEnv(r.agentEnv(ws), proxy), Timeout: r.cfg.Agent.Timeout, Output: out, Boundary: boundary,
		})
		end()
		if err != nil {
			reason := fmt.Sprintf("verify command `%s` failed (exit code %d)", cmd, res.ExitCode)
			// What the verify command's exit says is in the reason: the command's, not the agent's.
			var exit *agent.ExitError
			restated := errors.As(err, &exit) && exit.Signal == ""
			if res.TimedOut {
				reason = fmt.Sprintf("verify command `%s` timed out after %s (agent.timeout)", cmd, r.cfg.Agent.Timeout)
				restated = true
			}
			return &StepError{Step: "verify", Reason: reason, Err: &AgentFailure{Err: err, Tail: res.Tail, Restated: restated}}
		}
	}
	return nil
}

// Scan refuses a change whose files hold the value of a secret the agent holds (agent.env's
// pass-through variables) or ralph's token: a prompt-injected agent would commit it, and ralph would push
// it to GitHub.
func (r *Session) Scan(ctx context.Context, ws *workspace.Workspace, changes []git.Change) error {
	secrets := r.secrets()
	if len(secrets) == 0 {
		return nil
	}
	var bad []string
	for _, c := range changes {
		if c.Status == "D" || c.NewMode == "120000" || c.NewMode == "160000" {
			continue
		}
		// What is scanned is what will be committed: the blob ralph stored, not the agent's copy.
		b, err := ws.Stored(ctx, c.NewSHA)
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.Path, err)
		}
		if names := leaksIn(secrets, string(b)); len(names) > 0 {
			bad = append(bad, fmt.Sprintf("`%s` (holds the value of %s)", c.Path, strings.Join(names, ", ")))
		}
	}
	if len(bad) > 0 {
		return &StepError{Step: "implement", Reason: "the change holds a secret the agent holds: " + strings.Join(bad, ", ") + "; nothing was pushed"}
	}
	return nil
}

// keepAfterTurnLimit: an agent stopped at its turn limit has not failed by that alone; the step's
// postcondition decides whether what it produced counts.
func keepAfterTurnLimit(res agent.Result) bool {
	return res.Usage != nil && res.Usage.HitTurnLimit && !res.Usage.OverBudget && !res.TimedOut && !res.Interrupted
}
