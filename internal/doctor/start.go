package doctor

import (
	"context"
	"errors"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// StartError is what a run found wrong before it touched an issue: each problem with what to do.
type StartError struct {
	Problems []Finding
}

func (e *StartError) Error() string {
	var parts []string
	for _, p := range e.Problems {
		s := p.Msg
		if p.Fix != "" {
			s += ": " + p.Fix
		}
		parts = append(parts, s)
	}
	return "the agent cannot run here, so ralph left the issue alone: " + strings.Join(parts, "; ")
}

// Start is what every run that may run a step checks before it touches an issue, at no request's cost:
// agent.Preflight (the CLI, the variables agent.env passes through, the boundary), that a preset's CLI
// gets an API key, and, in the Action, that the workflow running it (wf, nil when it cannot be read)
// gives the token what ralph needs and can be dispatched. It returns what to log: the boundary and the
// agent's version.
func Start(ctx context.Context, cfg config.Config, env []string, sb sandbox.Config, wf *Workflow, where Place) ([]string, error) {
	var problems []Finding
	var info []string
	desc, err := agent.Preflight(cfg.Agent, env, sb)
	var pe *agent.PreflightError
	switch {
	case errors.As(err, &pe):
		for _, p := range pe.Problems {
			if strings.HasPrefix(p, "agent.env passes ") && len(pe.Missing) > 0 {
				problems = append(problems, missingKeys(pe.Missing, where))
				continue
			}
			problems = append(problems, problem(p, ""))
		}
	case err != nil:
		return nil, err
	default:
		info = append(info, "the agent runs as "+desc)
		if v, err := agent.Version(ctx, cfg.Agent, env); err != nil {
			problems = append(problems, problem(err.Error(), "check that the CLI runs: "+programOf(cfg.Agent.Preset)+" --version"))
		} else if v != "" {
			info = append(info, "agent: "+v)
		}
	}
	keyMissing := pe != nil && len(pe.Missing) > 0
	if cfg.GatewayVendor() != "" {
		// ralph's model gateway holds the key: it must be in ralph's environment, and agent.env need not
		// name it (the agent gets a key of the gateway's). A key agent.env names and ralph lacks is said
		// once, above.
		if err := agent.PreflightGateway(cfg, env); err != nil && !keyMissing {
			problems = append(problems, problem(strings.TrimPrefix(err.Error(), "the agent cannot run here, so ralph left the issue alone: "), ""))
		}
	} else if msg := agent.NoKey(cfg.Agent); msg != "" {
		problems = append(problems, problem(msg, "in "+config.DefaultPath+" (gh ralph init writes it so)"))
	}
	// The verify commands' programs, where they run: verify would fail every phase otherwise.
	problems = append(problems, verifyPrograms(cfg, env, sb, where)...)
	if wf != nil && where == InAction {
		for _, f := range Problems(WorkflowFile(wf, cfg)) {
			// A key the step does not get is a variable that is not set (above); a board without its
			// token is a warning of the board's own.
			// What only the fix step needs stops no other step.
			if strings.Contains(f.Msg, "does not give ralph's step") || strings.Contains(f.Msg, "project_token") || strings.Contains(f.Msg, FixStep) {
				continue
			}
			problems = append(problems, f)
		}
	}
	if len(problems) > 0 {
		return info, &StartError{Problems: problems}
	}
	return info, nil
}

// programOf is the program of preset name's CLI.
func programOf(name string) string {
	p, _ := preset.Lookup(name)
	return p.Program
}
