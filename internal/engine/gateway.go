package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/workspace"
)

// Ledger keeps what the repository spends on the model per UTC day, across runs (budget.day);
// *ledger.Ledger implements it.
type Ledger interface {
	Today(ctx context.Context) (ledger.Day, error)
	Add(ctx context.Context, cost float64, tokens int, note string) (ledger.Day, error)
}

var _ Ledger = (*ledger.Ledger)(nil)

// The budgets, named by the settings that set them.
const (
	budgetStepCost   = "agent.max_cost"
	budgetStepTokens = "agent.max_tokens"
	budgetIssue      = "budget.issue"
	budgetDay        = "budget.day"
)

// budgetError is a step whose agent's model requests ralph's gateway refused at a budget, or whose budget
// was spent before the agent started. The issue goes to a person, with the figures and what to raise.
type budgetError struct {
	limit  gateway.Limit
	before bool        // reached before the agent ran: the agent did not run
	spent  agent.Usage // what this step's agent spent
	kept   string      // what of the step's work ralph kept, for the person
}

func (b *budgetError) Error() string {
	if b.before {
		return "the model budget is spent (" + b.limit.Why + ")"
	}
	return "the model budget was reached (" + b.limit.Why + ")"
}

// gatewayCredential is the model key ralph holds for its gateway, when the gateway is on.
func (r *runner) gatewayCredential() (gateway.Vendor, gateway.Credential, bool) {
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
func (r *runner) agentEnv(ws *workspace.Workspace) []string {
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
	}
	env := agent.Environ(r.baseEnv, secrets, extra)
	return append(env, "HOME="+ws.Home, "TMPDIR="+ws.Tmp)
}

// openGateway starts ralph's model gateway for one agent run, with what remains of each budget: the
// step's, the issue's (its record's total so far) and the day's (the ledger). It returns nil when the
// agent runs without the gateway, and a *budgetError, before anything runs, when a budget is already spent.
func (r *runner) openGateway(ctx context.Context, ic *issue, command string) (*gateway.Gateway, *agent.Gateway, error) {
	v, cred, ok := r.gatewayCredential()
	if v == "" {
		return nil, nil, nil
	}
	if !ok {
		return nil, nil, &StepError{Step: command, Reason: fmt.Sprintf("ralph's model gateway has no %s key: set %s in ralph's environment", v, strings.Join(v.CredentialNames(), " or "))}
	}
	limits, err := r.limits(ctx, ic)
	if err != nil {
		return nil, nil, &StepError{Step: command, Reason: "ralph could not read what the repository spent today (budget.day)", Err: err}
	}
	for _, l := range limits {
		if l.Cost < 0 || l.Cost == 0 && l.Tokens == 0 {
			return nil, nil, &StepError{Step: command, Reason: "the agent was not run", Err: &budgetError{limit: l, before: true}}
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
	gw, err := gateway.Start(gateway.Options{Vendor: v, Upstream: r.cfg.Gateway.Upstream, Credential: cred, Prices: gateway.DefaultPrices(v).With(overrides),
		Limits: limits, Transport: r.modelTransport, ServerTools: tools})
	if err != nil {
		return nil, nil, fmt.Errorf("starting ralph's model gateway: %w", err)
	}
	r.log.Infof("the agent reaches the %s API through ralph's model gateway at %s%s", v, gw.URL(), describeLimits(limits))
	return gw, &agent.Gateway{Vendor: v, URL: gw.URL(), Key: gw.Key(), KeyName: cred.Name, ServerTools: tools}, nil
}

// limits are the run's budgets: the step's as configured, the issue's and the day's as what remains of
// them (zero or less: spent).
func (r *runner) limits(ctx context.Context, ic *issue) ([]gateway.Limit, error) {
	a, b := r.cfg.Agent, r.cfg.Budget
	var limits []gateway.Limit
	if a.MaxCost > 0 {
		limits = append(limits, gateway.Limit{Name: budgetStepCost, Cost: a.MaxCost, Why: fmt.Sprintf("agent.max_cost is %s per step", dollars(a.MaxCost))})
	}
	if a.MaxTokens > 0 {
		limits = append(limits, gateway.Limit{Name: budgetStepTokens, Tokens: a.MaxTokens, Why: fmt.Sprintf("agent.max_tokens is %s tokens per step", agent.Thousands(a.MaxTokens))})
	}
	if b.Issue > 0 {
		spent := 0.0
		if ic.rec.Usage != nil {
			spent = ic.rec.Usage.CostUSD
		}
		limits = append(limits, remaining(budgetIssue, b.Issue, spent,
			fmt.Sprintf("budget.issue is %s for this issue, which had spent $%.4f before this step", dollars(b.Issue), spent)))
	}
	if b.Day > 0 {
		if r.ledger == nil {
			return nil, fmt.Errorf("budget.day needs ralph's repository, which this run has not")
		}
		d, err := r.ledger.Today(ctx)
		if err != nil {
			return nil, err
		}
		limits = append(limits, remaining(budgetDay, b.Day, d.CostUSD,
			fmt.Sprintf("budget.day is %s a day for the repository, which had spent $%.4f on %s (UTC) before this step", dollars(b.Day), d.CostUSD, d.Date)))
	}
	return limits, nil
}

// remaining is a budget of total dollars of which spent are gone; a spent budget has a cost of -1.
func remaining(name string, total, spent float64, why string) gateway.Limit {
	left := total - spent
	if left <= 0 {
		left = -1
	}
	return gateway.Limit{Name: name, Cost: left, Why: why}
}

func describeLimits(limits []gateway.Limit) string {
	if len(limits) == 0 {
		return " (no budget)"
	}
	var parts []string
	for _, l := range limits {
		if l.Tokens > 0 {
			parts = append(parts, fmt.Sprintf("%s tokens left of %s", agent.Thousands(l.Tokens), l.Name))
		} else {
			parts = append(parts, fmt.Sprintf("$%.4f left of %s", l.Cost, l.Name))
		}
	}
	return "; " + strings.Join(parts, ", ")
}

// closeGateway ends the run's gateway (its key is good for nothing after), makes the gateway's figures
// the run's usage (the CLI's turns and model kept), says in the log what it refused, adds the run's
// spending to the day's ledger, and returns the budget that stopped the run, if one did.
func (r *runner) closeGateway(ctx context.Context, ic *issue, command string, gw *gateway.Gateway, res *agent.Result) *gateway.Stop {
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
	if len(g.Unpriced) > 0 {
		sort.Strings(g.Unpriced)
		r.log.Warnf("ralph's model gateway has no price for %s: counted at the dearest of the price table; set gateway.prices", strings.Join(g.Unpriced, ", "))
	}
	if r.cfg.Budget.Day > 0 && r.ledger != nil && (g.CostUSD > 0 || g.Total() > 0) {
		d, err := r.ledger.Add(context.WithoutCancel(ctx), g.CostUSD, g.Total(), fmt.Sprintf("#%d %s", ic.n, command))
		if err != nil {
			r.log.Warnf("the day's spending was not recorded: %v", err)
		} else {
			r.log.Infof("the repository has spent $%.4f on %s (UTC), of budget.day %s", d.CostUSD, d.Date, dollars(r.cfg.Budget.Day))
		}
	}
	return stop
}

// budgetReason says, for the issue's comment and record, which budget stopped the step, the figures, what
// was kept and how to go on.
func budgetReason(n int, be *budgetError) string {
	var b strings.Builder
	if be.before {
		fmt.Fprintf(&b, "The model budget is spent, so the agent did not run: %s.", be.limit.Why)
	} else {
		s := be.spent
		fmt.Fprintf(&b, "The agent's model spending reached a budget, and ralph's model gateway refused its further requests: %s. This step spent $%.4f in %d model request%s (%s tokens in, %s out), as the gateway metered them.",
			be.limit.Why, s.CostUSD, s.Requests, agent.Plural(s.Requests), agent.Thousands(s.InputTokens), agent.Thousands(s.OutputTokens))
	}
	if be.kept != "" {
		b.WriteString(" " + be.kept)
	}
	how := map[string]string{
		budgetStepCost:   "raise `agent.max_cost` in `.github/ralph.yml`",
		budgetStepTokens: "raise `agent.max_tokens` in `.github/ralph.yml`",
		budgetIssue:      "raise `budget.issue` in `.github/ralph.yml`",
		budgetDay:        "wait for the next UTC day, or raise `budget.day` in `.github/ralph.yml`",
	}[be.limit.Name]
	fmt.Fprintf(&b, " To go on, %s, then say `/ralph retry` (or run `gh ralph retry %d`).", how, n)
	return b.String()
}

// dollars writes a budget as configured: cents, or as many decimals as a smaller amount needs (up to six).
func dollars(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	switch {
	case len(frac) <= 2:
		return "$" + whole + "." + frac + strings.Repeat("0", 2-len(frac))
	case len(frac) > 6:
		return "$" + strconv.FormatFloat(x, 'f', 6, 64)
	}
	return "$" + s
}

// keepDocument keeps the document an agent stopped at a budget had written: whole (it passes the step's
// check), it is committed with the step's key, so that /ralph retry finds it on the branch and goes on
// without the agent; unfinished, it is committed as a draft, for a person to read, and the retry writes
// it again.
func (r *runner) keepDocument(ctx context.Context, ic *issue, ws *workspace.Workspace, st docStep, key, doc string, be *budgetError) {
	whole := st.check == nil || st.check(doc) == nil
	msg := st.subject + "\n\n" + trailerKey + ": " + key
	if !whole {
		msg = st.subject + " (unfinished: the budget was reached)\n\n" + draftKey + ": " + key
	}
	if err := r.commitDoc(ctx, ic, ws, st.rel, doc, msg); err != nil {
		r.log.Warnf("#%d: keeping the document written before the budget: %v", ic.n, err)
		be.kept = fmt.Sprintf("ralph could not keep the document the agent had written: %v.", err)
		return
	}
	where := fmt.Sprintf("[`%s`](%s) on the branch `%s`", st.rel, r.gh.BlobURL(ic.rec.Branch, st.rel), ic.rec.Branch)
	if whole {
		be.kept = fmt.Sprintf("The document was whole when the agent was stopped: it is committed at %s, and `/ralph retry` posts it and goes on without running the agent again.", where)
		return
	}
	be.kept = fmt.Sprintf("The document as far as the agent got is committed at %s, unfinished; `/ralph retry` has the agent write it again.", where)
}

// draftKey marks the commit of an unfinished document, which a rerun must not take for the step's.
const draftKey = "Ralph-Draft"

// keepPhase keeps the work of an implement step stopped at a budget when it is a verified phase: the
// changes pass verify, and are committed with the phase's key and pushed (so /ralph retry goes on with the
// next phase). Otherwise nothing of the phase is pushed; the phases done before stay on the branch.
func (r *runner) keepPhase(ctx context.Context, ic *issue, rec *Record, ws *workspace.Workspace, k, m int, key string, be *budgetError) {
	sha, err := r.commitPhase(ctx, ic, rec, ws, k, m, key)
	if err != nil {
		r.log.Warnf("#%d: phase %d's changes are not kept: %v", ic.n, k+1, err)
		be.kept = fmt.Sprintf("Phase %d of %d's changes are not kept (%v); the phases done before stay on the branch `%s`, and `/ralph retry` does phase %d again.", k+1, m, err, ic.rec.Branch, k+1)
		return
	}
	be.kept = fmt.Sprintf("Phase %d of %d's changes passed verify and are committed (%s) on the branch `%s`; `/ralph retry` goes on with what is left.", k+1, m, short(sha), ic.rec.Branch)
}
