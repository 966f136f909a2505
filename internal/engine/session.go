package engine

import (
	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/session"
	"github.com/ralph-dev/gh-ralph/internal/steps"
)

// StepError is a step that failed; the issue was left in its start state (or sent to Human Needed).
type StepError = session.StepError

// Meterer is a Logger that shows what the agent has used so far while its section is open.
type Meterer = session.Meterer

// session is the step's session on issue n, whose record is rec: NewSession's when set, else the real
// one. Its notes fill the step's work wk.
func (e *Engine) session(n int, rec Record, wk *steps.Work) Session {
	if e.NewSession != nil {
		return e.NewSession(n)
	}
	spent := 0.0
	if rec.Usage != nil {
		spent = rec.Usage.CostUSD
	}
	return session.New(session.Options{Config: e.Config, Log: e.Log, Agent: e.Agent, Sandbox: e.Sandbox, BaseEnv: e.AgentEnv,
		SecretNames: e.Secrets, ModelTransport: e.ModelTransport, Ledger: e.Ledger, Issue: n, Spent: func() float64 { return spent }, Notes: notes{work: wk, log: e.Log}})
}

// notes keeps what the session's runs leave for the issue's record, in the step's work.
type notes struct {
	work *steps.Work
	log  Logger
}

// Usage keeps what the agent reported of its run for the record and logs it.
func (n notes) Usage(command string, u *agent.Usage) {
	if u == nil {
		return
	}
	n.work.Usage = u
	n.log.Infof("agent %s: %s", command, u)
}

func (n notes) Refused(host string) bool { return n.work.NoteRefused(host) }

func (n notes) RefusedMore(more int) { n.work.RefusedMore += more }
