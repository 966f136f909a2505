package session

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// gatewayCredential is the model key ralph holds for its gateway, when the gateway is on.
func (r *Session) gatewayCredential() (gateway.Vendor, gateway.Credential, bool) {
	v := gateway.Vendor(r.cfg.GatewayVendor())
	if v == "" {
		return "", gateway.Credential{}, false
	}
	c, ok := agent.ModelCredential(v, r.baseEnv, r.cfg.Agent.Env)
	return v, c, ok
}

// agentEnv is the agent's environment: the allowlist of ralph's own, agent.env, and a HOME and TMPDIR of
// its own. With the gateway on, none of the vendor's key variables is passed, even when agent.env names
// one, and no value that holds the model key: the agent gets the gateway's key in its place (runAgent).
func (r *Session) agentEnv(ws *workspace.Workspace) []string {
	extra, secrets := r.cfg.Agent.Env, r.secretNames
	if v, cred, ok := r.gatewayCredential(); v != "" {
		extra = map[string]string{}
		for k, val := range r.cfg.Agent.Env {
			extra[k] = val
		}
		for _, n := range v.CredentialNames() {
			delete(extra, n)
		}
		if ok {
			secrets = append(append([]string(nil), secrets...), cred.Value)
		}
		// The preset's other vendors' keys too: the agent reaches them through the gateway, or not at all.
		for _, m := range r.cfg.GatewayMore() {
			mv := gateway.Vendor(m)
			for _, n := range mv.CredentialNames() {
				delete(extra, n)
			}
			if c, ok := agent.ModelCredential(mv, r.baseEnv, r.cfg.Agent.Env); ok {
				secrets = append(append([]string(nil), secrets...), c.Value)
			}
		}
	}
	env := agent.Environ(r.baseEnv, secrets, extra)
	env = append(env, stepCaches(r.baseEnv, r.cfg.Agent.Env, ws.Home, r.agentReads)...)
	return append(env, "HOME="+ws.Home, "TMPDIR="+ws.Tmp)
}

// openGateway starts ralph's model gateway for one agent run, with what remains of each budget: the
// step's, the issue's (its record's total so far) and the day's (the ledger). It returns nil when the
// agent runs without the gateway, and a *BudgetError, before anything runs, when a budget is already spent.
func (r *Session) openGateway(ctx context.Context, command string) (*gateway.Gateway, *agent.Gateway, error) {
	v, cred, ok := r.gatewayCredential()
	if v == "" {
		return nil, nil, nil
	}
	if !ok {
		return nil, nil, &StepError{Step: command, Reason: fmt.Sprintf("ralph's model gateway has no %s key: set %s in ralph's environment", v, strings.Join(v.CredentialNames(), " or "))}
	}
	limits, err := r.limits(ctx)
	if err != nil {
		return nil, nil, &StepError{Step: command, Reason: "ralph could not read what the repository spent today (budget.day)", Err: err}
	}
	for _, l := range limits {
		if l.Cost < 0 || l.Cost == 0 && l.Tokens == 0 {
			return nil, nil, &StepError{Step: command, Reason: "the agent was not run", Err: &BudgetError{Limit: l, Before: true}}
		}
	}
	overrides := gateway.Prices{}
	for model, p := range r.cfg.Gateway.Prices {
		calls := map[gateway.ServerTool]float64{}
		for t, c := range p.Calls {
			calls[gateway.ServerTool(t)] = c
		}
		overrides[model] = gateway.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, Calls: calls}
	}
	var tools []gateway.ServerTool
	for _, t := range r.cfg.Gateway.ServerTools {
		tools = append(tools, gateway.ServerTool(t))
	}
	// The preset's other vendors (opencode's) whose key ralph holds are served besides, under the same
	// budget.
	var more []gateway.API
	var served []gateway.Vendor
	for _, m := range r.cfg.GatewayMore() {
		mv := gateway.Vendor(m)
		if c, ok := agent.ModelCredential(mv, r.baseEnv, r.cfg.Agent.Env); ok {
			more = append(more, gateway.API{Vendor: mv, Credential: c, Prices: gateway.DefaultPrices(mv).With(overrides), Upstream: r.cfg.GatewayUpstream(m)})
			served = append(served, mv)
		}
	}
	gw, err := gateway.Start(gateway.Options{Vendor: v, Upstream: r.cfg.GatewayUpstream(string(v)), Credential: cred, Prices: gateway.DefaultPrices(v).With(overrides),
		Limits: limits, Transport: r.modelTransport, ServerTools: tools, Betas: r.cfg.Gateway.Betas, More: more})
	if err != nil {
		return nil, nil, fmt.Errorf("starting ralph's model gateway: %w", err)
	}
	r.log.Infof("the agent reaches the %s API through ralph's model gateway at %s%s", v, gw.URL(), describeLimits(limits))
	for _, m := range served {
		r.log.Infof("the agent reaches the %s API through ralph's model gateway at %s, metered into the same budget", m, gw.VendorURL(m))
	}
	return gw, &agent.Gateway{Vendor: v, URL: gw.URL(), Key: gw.Key(), KeyName: cred.Name, ServerTools: tools, More: served}, nil
}

// closeGateway ends the run's gateway (its key is good for nothing after), makes the gateway's figures
// the run's usage (the CLI's turns and model kept), says in the log what it refused, adds the run's
// spending to the day's ledger, and returns the budget that stopped the run, if one did.
func (r *Session) closeGateway(ctx context.Context, command string, gw *gateway.Gateway, res *agent.Result) *gateway.Stop {
	_ = gw.Close()
	g, stop := gw.Usage(), gw.Stopped()
	u := agent.Usage{}
	if res.Usage != nil {
		u.Turns, u.Model, u.HitTurnLimit = res.Usage.Turns, res.Usage.Model, res.Usage.HitTurnLimit
	}
	u.Requests, u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens = g.Requests, g.Input, g.CacheRead, g.CacheWrite, g.Output
	u.CostUSD, u.Metered = g.CostUSD, true
	if g.Model != "" {
		u.Model = g.Model
	}
	if stop != nil {
		u.Budget = stop.Limit.Name
	}
	res.Usage = &u
	for _, line := range gw.Refused() {
		r.log.Warnf("ralph's model gateway %s", line)
	}
	// A run that reached several vendors says what each was asked and billed, in one budget.
	vendors := make([]string, 0, len(g.Vendors))
	for v := range g.Vendors {
		vendors = append(vendors, string(v))
	}
	sort.Strings(vendors)
	for _, v := range vendors {
		s := g.Vendors[gateway.Vendor(v)]
		r.log.Infof("ralph's model gateway metered the %s API: %d requests, %d in / %d out tokens, $%.4f", v, s.Requests, s.Input, s.Output, s.CostUSD)
	}
	if len(g.Unpriced) > 0 {
		sort.Strings(g.Unpriced)
		r.log.Warnf("ralph's model gateway has no price for %s: counted at the dearest of the price table; set gateway.prices", strings.Join(g.Unpriced, ", "))
	}
	if r.cfg.Budget.Day > 0 && r.ledger != nil && (g.CostUSD > 0 || g.Total() > 0) {
		d, err := r.ledger.Add(context.WithoutCancel(ctx), g.CostUSD, g.Total(), fmt.Sprintf("#%d %s", r.issue, command))
		if err != nil {
			r.log.Warnf("the day's spending was not recorded: %v", err)
		} else {
			r.log.Infof("the repository has spent $%.4f on %s (UTC), of budget.day %s", d.CostUSD, d.Date, dollars(r.cfg.Budget.Day))
		}
	}
	return stop
}
