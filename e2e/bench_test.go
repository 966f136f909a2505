package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/project"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Cost benchmarks: what ralph spends of GitHub's API (the real limit on a busy repository: an Actions token
// gets about 1,000 requests an hour) and of the runner, per step and per sweep. They run the built binary
// against the GitHub test server with an agent that answers at once, and print a table:
//
//	go test ./e2e -run '^$' -bench Cost -benchtime 1x
//
// Wall time is the whole run of the binary (process start, git, API calls; the scripted agent takes a few
// milliseconds), so it is an upper bound of ralph's own time; peak memory is the process's maximum RSS.

type stepCost struct {
	step          string
	rest, graphql int
	wall          time.Duration
	maxRSS        int64 // KiB
}

func (e *env) measure(f func() result) (stepCost, result) {
	e.t.Helper()
	reqs := e.srv.Requests()
	gql := len(e.srv.GraphQLRequests())
	start := time.Now()
	r := f()
	c := stepCost{step: r.outputs["step"], wall: time.Since(start), maxRSS: r.maxRSS}
	for _, q := range e.srv.Requests()[len(reqs):] {
		if !strings.HasSuffix(q.Path, "/graphql") {
			c.rest++
		}
	}
	c.graphql = len(e.srv.GraphQLRequests()) - gql
	return c, r
}

func printCosts(title string, costs []stepCost) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "\n%s\nstep\tREST\tGraphQL\twall\tpeak RSS\n", title)
	for _, c := range costs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%.1f MiB\n", c.step, c.rest, c.graphql, c.wall.Round(time.Millisecond), float64(c.maxRSS)/1024)
	}
	w.Flush()
}

// BenchmarkCostSteps runs one issue through every step kind (with a project board, so that its GraphQL
// requests count too) and reports each run's requests, wall time and peak memory. The most REST requests
// any step took is reported as max-REST/step (the target: at most 10; the label run adds one permission
// check of who added the label), the board's GraphQL requests as max-GraphQL/step, the longest run as
// max-s/step (the target: at most 0.3 s).
func BenchmarkCostSteps(b *testing.B) {
	for i := 0; i < b.N; i++ {
		costs := stepCosts(b)
		maxREST, maxGraphQL, maxWall := 0, 0, time.Duration(0)
		for _, c := range costs {
			maxREST, maxGraphQL, maxWall = max(maxREST, c.rest), max(maxGraphQL, c.graphql), max(maxWall, c.wall)
		}
		b.ReportMetric(float64(maxREST), "max-REST/step")
		b.ReportMetric(float64(maxGraphQL), "max-GraphQL/step")
		b.ReportMetric(maxWall.Seconds(), "max-s/step")
		// ralph's own time per step, with an agent that answers at once and no verify command: what every
		// run pays besides the checkout, the agent and verify. The run's git fetch and push count in it.
		if maxWall > 300*time.Millisecond {
			b.Errorf("a step took %s of ralph's own time, over 0.3 s", maxWall.Round(time.Millisecond))
		}
		if i == 0 {
			printCosts("ralph: cost of each step (REST and GraphQL requests, wall time of the run, peak memory)", costs)
		}
	}
}

func stepCosts(b *testing.B) []stepCost {
	e := newEnv(b, baseConfig(b, "project:\n  owner: octo\n  number: 2\n"))
	e.srv.CreateProject("octo", 2, "Roadmap")
	e.srv.SetProjectToken("project-token")
	board, err := project.New(project.Options{GraphQL: e.srv.GraphQLURL, Token: "project-token", Transport: e.srv.Client().Transport, Owner: "octo", Number: 2})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := board.EnsureField(context.Background()); err != nil {
		b.Fatal(err)
	}
	inputs := map[string]string{"project_token": "project-token"}
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	var costs []stepCost
	c, r := e.measure(func() result { return e.run("issues", labeledEvent(b, n, workflow.LabelBuild, maintainer), inputs) })
	c.step = "enroll + " + c.step
	costs = append(costs, c)
	for r.exit == 0 {
		ds := e.srv.Dispatches()
		if e.seen >= len(ds) {
			break
		}
		d := ds[e.seen]
		e.seen++
		c, r = e.measure(func() result { return e.run("workflow_dispatch", dispatchEvent(b, d.Inputs), inputs) })
		costs = append(costs, c)
	}
	if r.exit != 0 {
		b.Fatalf("a run failed:\n%s%s", r.stdout, r.stderr)
	}
	pr := e.srv.Pulls()[0]
	e.srv.MergePull(pr.Number)
	c, _ = e.measure(func() result { return e.run("pull_request", pullClosedEvent(b, e.srv.Pulls()[0]), inputs) })
	costs = append(costs, c)
	return costs
}

// BenchmarkCostSweep sweeps 500 enrolled issues in mixed states and advances 5, and reports the sweep's
// requests against its budget: the list's pages, 3 for each issue looked at closely, and the steps it ran.
func BenchmarkCostSweep(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e := newEnv(b, baseConfig(b, "sweep:\n  max: 5\nchain: false\n"))
		states := []workflow.State{"", workflow.ResearchNeeded, workflow.PlanInReview, workflow.InReview, workflow.HumanNeeded,
			workflow.Done, workflow.ReadyForPlan, workflow.InReview, workflow.PlanInReview, workflow.HumanNeeded}
		for k := 0; k < 500; k++ {
			n := e.srv.CreateIssue("octocat", fmt.Sprintf("Issue %d", k), "")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
			if s := states[k%len(states)]; s != "" {
				e.seedRecord(n, s)
			}
		}
		before := len(e.srv.Requests())
		start := time.Now()
		r := e.run("schedule", map[string]any{"schedule": "17 * * * *"}, nil)
		wall := time.Since(start)
		if r.exit != 0 {
			b.Fatalf("sweep failed:\n%s%s", r.stdout, r.stderr)
		}
		reqs := e.srv.Requests()[before:]
		pages, close := 0, 0
		for _, q := range reqs {
			if q.Method == "GET" && q.Path == "/repos/octo/demo/issues" {
				pages++
			}
		}
		advanced := 0
		fmt.Sscanf(sweepLine(r.stdout), "sweep: 500 enrolled open issues, %d looked at closely, %d to advance", &close, &advanced)
		budget := pages + 3*close + 10*advanced
		b.ReportMetric(float64(len(reqs)), "requests/sweep")
		b.ReportMetric(float64(budget), "budget/sweep")
		if i == 0 {
			fmt.Printf("\nralph: a sweep over 500 enrolled issues in mixed states, advancing %d\n", advanced)
			fmt.Printf("requests: %d (list pages %d, issues looked at closely %d, steps %d) — budget %d = pages + 3 × looked at + 10 × steps\n",
				len(reqs), pages, close, advanced, budget)
			fmt.Printf("wall time of the sweep run: %s, peak RSS %.1f MiB\n", wall.Round(time.Millisecond), float64(r.maxRSS)/1024)
		}
		if len(reqs) > budget {
			b.Errorf("the sweep took %d requests, over its budget of %d", len(reqs), budget)
		}
	}
}

func sweepLine(stdout string) string {
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "sweep: ") {
			return l
		}
	}
	return ""
}
