package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/prompts"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// trailerKey marks ralph's commits with the step that made them ("Ralph-Step: plan/1").
const trailerKey = "Ralph-Step"

// committedStep looks for the commit of step key on the branch: a run that crashed after pushing it left it
// there (or, in ralph's repository, one that could not push it: it is pushed now).
func committedStep(ctx context.Context, ic *issue, ws *workspace.Workspace, key string) (string, bool, error) {
	sha, found, err := ws.FindStep(ctx, trailerKey, key)
	if err != nil {
		return "", false, fmt.Errorf("looking for the commit of %s: %w", key, err)
	}
	if found && ws.Built() != "" {
		// Built by an earlier run that could not push it: pushed now, as that run would have.
		if err := push(ctx, ic, ws); err != nil {
			return "", false, err
		}
	}
	return sha, found, nil
}

// checkout gives the agent a fresh copy of the issue's branch (of the base when the branch is new), with a
// HOME and TMPDIR of its own.
func (r *runner) checkout(ctx context.Context) (*workspace.Workspace, error) {
	ws, err := r.workspaces.Prepare(ctx, r.ic.n, r.ic.rec.Branch, r.ic.rec.Base)
	if err != nil {
		return nil, fmt.Errorf("preparing the agent's copy: %w", err)
	}
	r.ic.ws = ws
	r.seedBuildCache(ws)
	if err := r.openDocs(ctx); err != nil {
		return nil, err
	}
	return ws, nil
}

// runAgent renders the prompt and runs the agent once.
func (r *runner) runAgent(ctx context.Context, ws *workspace.Workspace, command, artifact string, phase, phases int, d prompts.Data) error {
	prompt, err := r.prompts.Render(command, d)
	if err != nil {
		return &StepError{Step: command, Reason: "the prompt template could not be rendered", Err: err}
	}
	if err := r.writeAhead(ctx); err != nil {
		return err
	}
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
	out, end := r.log.Untrusted(fmt.Sprintf("agent: %s for #%d", command, r.ic.n))
	if m, ok := r.log.(Meterer); ok && gw != nil {
		// What the gateway has metered so far, for a log that shows it while the agent works.
		m.Meter(func() (int, float64) {
			u := gw.Usage()
			return u.Total(), u.CostUSD
		})
	}
	res, err := r.agent.Run(ctx, agent.Invocation{
		Command: command, Issue: r.ic.n, Artifact: artifact, Phase: phase, Phases: phases,
		Dir: ws.Dir, TempDir: ws.Tmp, Prompt: prompt, Env: proxyEnv(r.agentEnv(ws), proxy), Timeout: r.cfg.Agent.Timeout,
		Output: out, Boundary: boundary, Gateway: access,
	})
	end()
	r.closeFirewall(fw)
	r.closeNetwork("the agent", proxy)
	if gw != nil {
		if stop := r.closeGateway(ctx, command, gw, &res); stop != nil {
			r.noteUsage(command, res.Usage)
			return &StepError{Step: command, Reason: "the agent was stopped", Err: &budgetError{limit: stop.Limit, spent: *res.Usage}}
		}
	}
	r.noteUsage(command, res.Usage)
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
		return &StepError{Step: command, Reason: reason, Err: &agentFailure{err: err, tail: res.Tail, restated: restated}}
	}
	// How long the agent ran is said by the end of its section (Untrusted), once.
	return nil
}

// boundary is the agent's confinement for one step: the door's settings, with the step's copy, HOME and
// TMPDIR as the only places it may write.
func (r *runner) boundary(ws *workspace.Workspace, ports ...int) (*sandbox.Boundary, error) {
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

// guard records the agent's files in ralph's own index and refuses a change to protected paths, gitlinks,
// oversized files and symlinks that leave the repository.
func guard(ctx context.Context, ws *workspace.Workspace, step string) ([]git.Change, error) {
	changes, err := ws.Collect(ctx)
	var refused *workspace.RefusedError
	if errors.As(err, &refused) {
		return nil, &StepError{Step: step, Reason: refused.Error() + "; nothing was pushed"}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the agent's changes: %w", err)
	}
	return changes, nil
}

// verify runs the configured commands in the worktree; all must pass.
// The commands run the agent's code, so they run inside the agent's boundary, and nothing they start
// outlives them.
func (r *runner) verify(ctx context.Context, ws *workspace.Workspace, phase, phases int) error {
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
			Command: "verify", Issue: r.ic.n, Phase: phase, Phases: phases, Dir: ws.Dir, TempDir: ws.Tmp,
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
			return &StepError{Step: "verify", Reason: reason, Err: &agentFailure{err: err, tail: res.Tail, restated: restated}}
		}
	}
	return nil
}

// scanSecrets refuses a change whose files hold the value of a secret the agent holds (agent.env's
// pass-through variables) or ralph's token: a prompt-injected agent would commit it, and ralph would push
// it to GitHub.
func (r *runner) scanSecrets(ctx context.Context, ws *workspace.Workspace, changes []git.Change) error {
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

func push(ctx context.Context, ic *issue, ws *workspace.Workspace) error {
	if err := ws.Push(ctx); err != nil {
		var rej *git.PushRejectedError
		if errors.As(err, &rej) && len(rej.Rules) > 0 {
			quoted := make([]string, len(rej.Rules))
			for i, r := range rej.Rules {
				quoted[i] = "`" + Inert(r) + "`"
			}
			return &StepError{Step: "push", Reason: fmt.Sprintf("GitHub refused the push to %s: it breaks the repository's rules (GH013): %s; the same push meets the same rules, so change the ruleset or ralph's settings (`gh ralph doctor` lists the rules and what ralph needs of each), then retry", ws.Branch, strings.Join(quoted, ", ")), Err: err}
		}
		if errors.As(err, &rej) {
			return &StepError{Step: "push", Reason: fmt.Sprintf("the push to %s was refused (the branch moved, or a rule forbids it)", ws.Branch), Err: err}
		}
		return fmt.Errorf("pushing %s: %w", ws.Branch, err)
	}
	return nil
}

// readBranchFile reads an earlier document from ralph's repository at the commit the step began from
// (never from the agent's copy), or, when the issue's documents are kept apart, at ralph's last commit on
// its documents branch; "" when it is not there.
func (r *runner) readBranchFile(ctx context.Context, ws *workspace.Workspace, rel string) string {
	read := ws.Committed
	if r.ic.docs != nil {
		read = r.ic.docs.Own // kept apart: at ralph's last commit there (docs.go)
	}
	doc, err := read(ctx, rel)
	if err != nil {
		r.log.Warnf("reading %s: %v", rel, err)
	}
	return doc
}

// prepare gives the step's agent its copy of the branch and the prompt's data.
func (r *runner) prepare(ctx context.Context) (*workspace.Workspace, prompts.Data, error) {
	ws, err := r.checkout(ctx)
	if err != nil {
		return nil, prompts.Data{}, err
	}
	d, err := r.promptData(ctx, "")
	return ws, d, err
}
