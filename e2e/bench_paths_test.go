package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// costPath is one way an issue goes, driven from its label until no run is dispatched: each step's and each
// escalation's run is measured against stepBudget.
type costPath struct {
	name     string
	config   string            // added to baseConfig
	verify   string            // the verify command, instead of baseConfig's
	controls map[string]string // the scripted agent's answers
	// then, when set, does what a person does once the chain stopped, and returns the runs it made.
	then func(e *env, n int) []stepCost
}

var costPaths = []costPath{
	{name: "plan sent to a person (review: interactive), who approves it", config: "research: false\nreview: interactive\n",
		then: func(e *env, n int) []stepCost { return []stepCost{e.personSays(n, "/ralph approve")} }},
	{name: "plan sent back, then to a person (max_iterations: 1), who retries", config: "research: false\nmax_iterations: 1\n",
		controls: map[string]string{"verdict": "NEEDS_ITERATION"},
		then:     func(e *env, n int) []stepCost { return []stepCost{e.personSays(n, "/ralph retry")} }},
	{name: "plan sent back once (max_iterations: 2)", config: "research: false\nmax_iterations: 2\n",
		controls: map[string]string{"verdict": "NEEDS_ITERATION"}},
	{name: "implement fails verify to a person (max_failures: 2)", config: "research: false\nreview: skip\nmax_failures: 2\n", verify: "test -f no-such-file",
		controls: map[string]string{"phases": "1"}},
	{name: "plan without phases to a person", config: "research: false\nreview: skip\n",
		controls: map[string]string{"plan_without_phases": "1"}},
	{name: "self-review sends the work back", config: "research: false\nreview: skip\nmax_iterations: 1\n",
		controls: map[string]string{"phases": "1", "self_verdict": "NEEDS_ITERATION"}},
	{name: "pull request closed unmerged", config: "research: false\nreview: skip\nself_review: false\n",
		controls: map[string]string{"phases": "1"},
		then: func(e *env, n int) []stepCost {
			pr := e.srv.Pulls()[0]
			e.srv.ClosePull(pr.Number)
			c, _ := e.measure(func() result { return e.run("pull_request", pullClosedEvent(e.t, e.srv.Pulls()[0]), nil) })
			c.step = "closed unmerged"
			return []stepCost{c}
		}},
}

// BenchmarkCostPaths measures the runs of each path besides the happy one (BenchmarkCostSteps): each
// escalation to Human Needed, each sending back, and a person's answer to one. Every run of one step must
// stay within stepBudget (reported as max-requests/step); the run of a person's command does the command's
// bookkeeping and then the step it allows, under one lock and one read of the issue, and is held to the
// step's budget plus the command's own three requests (the person's permission, the record that keeps
// the command before the step starts, its label).
func BenchmarkCostPaths(b *testing.B) {
	const commandBudget = 3
	for i := 0; i < b.N; i++ {
		maxReqs := 0
		for _, p := range costPaths {
			costs := pathCosts(b, p)
			if i == 0 {
				printCosts("ralph: cost of each run, "+p.name+" (no project board)", costs)
			}
			created := false // ralph pushed to the branch: no later run reads the rules
			for _, c := range costs {
				// The signed commit has a budget of its own (signedBudget); the rules are read once, by the run
				// that creates the branch.
				signed, rules, token := 0, 0, 0
				for _, ep := range c.endpoints {
					if signedCost(ep) {
						signed++
					}
					if rulesCost(ep) {
						rules++
					}
					if tokenCheckCost(ep) {
						token++
					}
				}
				if token > 1 {
					b.Errorf("%s: %s checked the token %d times: %s", p.name, c.step, token, strings.Join(c.endpoints, ", "))
				}
				if signed > signedBudget {
					b.Errorf("%s: %s made %d signed commits, over the budget of %d: %s", p.name, c.step, signed, signedBudget, strings.Join(c.endpoints, ", "))
				}
				if rules > 0 && (rules > 1 || created) {
					b.Errorf("%s: %s read the rules %d times: only the runs before ralph first pushes to the branch read them: %s", p.name, c.step, rules, strings.Join(c.endpoints, ", "))
				}
				created = created || signed > 0
				c.rest -= signed + rules + token
				if c.steps == 2 {
					// A person's command and the step it runs, in one run.
					if c.rest+c.graphql > stepBudget+writeAheadBudget+commandBudget {
						b.Errorf("%s: %s took %d requests (%d REST, %d GraphQL), over the budget of a step and a command, %d: %s", p.name, c.step, c.rest+c.graphql, c.rest, c.graphql, stepBudget+writeAheadBudget+commandBudget, strings.Join(c.endpoints, ", "))
					}
					continue
				}
				maxReqs = max(maxReqs, c.rest+c.graphql)
				if c.rest+c.graphql > stepBudget+writeAheadBudget {
					b.Errorf("%s: %s took %d requests (%d REST, %d GraphQL), over the budget of %d: %s", p.name, c.step, c.rest+c.graphql, c.rest, c.graphql, stepBudget+writeAheadBudget, strings.Join(c.endpoints, ", "))
				}
			}
		}
		b.ReportMetric(float64(maxReqs), "max-requests/step")
	}
}

func pathCosts(b *testing.B, p costPath) []stepCost {
	cfg := baseConfig(b, p.config)
	if p.verify != "" {
		cfg = strings.Replace(cfg, "verify:\n  - test -f README.md\n", "verify:\n  - "+p.verify+"\n", 1)
	}
	e := newEnv(b, cfg)
	for k, v := range p.controls {
		e.setControl(k, v)
	}
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	var costs []stepCost
	c, r := e.measure(func() result { return e.run("issues", labeledEvent(b, n, workflow.LabelBuild, maintainer), nil) })
	c.step = "enroll + " + c.step
	costs = append(costs, c)
	for k := 0; k < 20; k++ {
		ds := e.srv.Dispatches()
		if e.seen >= len(ds) {
			break
		}
		d := ds[e.seen]
		e.seen++
		c, r = e.measure(func() result { return e.run("workflow_dispatch", dispatchEvent(b, d.Inputs), nil) })
		if c.step == "" {
			c.step = "(no step)"
		}
		c.step += fmt.Sprintf(" → %s", r.outputs["state"])
		costs = append(costs, c)
	}
	if p.then != nil {
		costs = append(costs, p.then(e, n)...)
	}
	if s := e.stateOf(n); s != workflow.HumanNeeded && s != workflow.PlanInReview && s != workflow.InReview && s != workflow.InProgress {
		b.Errorf("%s: the path ended in %s", p.name, s)
	}
	return costs
}

// stateOf is the issue's state label's state, "" when it has none (state fails the test then).
func (e *env) stateOf(n int) workflow.State {
	st := workflow.StatesFromLabels(e.srv.Labels(n))
	if len(st) != 1 {
		return ""
	}
	return st[0]
}

// personSays measures the run a maintainer's command starts (the command and the step it runs).
func (e *env) personSays(n int, body string) stepCost {
	c, r := e.measure(func() result { return e.comment(n, body, maintainer) })
	if r.exit != 0 {
		e.t.Fatalf("%s: exit %d\n%s%s", body, r.exit, r.stdout, r.stderr)
	}
	c.step = fmt.Sprintf("%s + %s → %s", body, r.outputs["step"], r.outputs["state"])
	c.steps = 2
	return c
}
