package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// BenchmarkFleet labels many issues at once and runs the label workflow's runs and the dispatches they
// make as GitHub Actions would — at most 8 at a time, one at a time per issue (the workflow's concurrency
// group) — against GitHub's secondary write limit scaled down (20 content-creating requests per 2 s; 403
// with Retry-After) and a primary limit per token. It reports the issues that reached In Review, runs,
// requests per step, refusals, requests inside a refusal's window, and the wall time against the floor
// the write limit sets (the writes made, at the limit's rate). RALPH_FLEET_ISSUES sets the issues (6);
// RALPH_FLEET_UNLIMITED=1 runs the same fleet without limits, whose wall time is what the machine allows.
//
//	go test ./e2e -run '^$' -bench BenchmarkFleet -benchtime 1x
func BenchmarkFleet(b *testing.B) {
	issues := 6
	if v, err := strconv.Atoi(os.Getenv("RALPH_FLEET_ISSUES")); err == nil && v > 0 {
		issues = v
	}
	const runners, writes, window = 8, 20, 2 * time.Second
	for i := 0; i < b.N; i++ {
		e := newEnvWith(b, baseConfig(b, ""), githubtest.Options{RunName: runNameTB(b)})
		e.pushShipped("ralph.yml", "ralph.yml")
		var ns []int
		for k := 0; k < issues; k++ {
			n := e.srv.CreateIssue("octocat", fmt.Sprintf("Add greeting %d", k), "Please.")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
			ns = append(ns, n)
		}
		if os.Getenv("RALPH_FLEET_UNLIMITED") == "" { // set: the same fleet without limits, for comparison
			e.srv.SetLimits(githubtest.Limits{Writes: writes, Window: window, Primary: 5000, PrimaryWindow: time.Hour})
		}
		type job struct {
			n      int
			event  string
			inputs map[string]any
		}
		var queue []job
		for _, n := range ns {
			queue = append(queue, job{n: n, event: "issues"})
		}
		busy := map[int]bool{}
		var mu sync.Mutex
		last := map[int][]string{} // each issue's runs: their event and the end of their output
		done := make(chan int)
		running, runs, seen, failed := 0, 0, 0, 0
		start := time.Now()
		for {
			// New dispatches join the queue, as GitHub queues the runs they start: read before the fleet is
			// called done, since the last run to end may have dispatched the next step of its issue.
			for ds := e.srv.Dispatches(); seen < len(ds); seen++ {
				n, _ := strconv.Atoi(fmt.Sprint(ds[seen].Inputs["issue"]))
				queue = append(queue, job{n: n, event: "workflow_dispatch", inputs: ds[seen].Inputs})
			}
			if len(queue) == 0 && running == 0 {
				break
			}
			launched := false
			for k := 0; k < len(queue) && running < runners; k++ {
				j := queue[k]
				if busy[j.n] {
					continue
				}
				queue = append(queue[:k:k], queue[k+1:]...)
				k--
				var payload any
				if j.event == "issues" {
					payload = labeledEvent(b, j.n, workflow.LabelBuild, maintainer)
				} else {
					payload = dispatchEvent(b, j.inputs)
				}
				p := e.start(j.event, payload, nil, runOpts{})
				busy[j.n], running, runs, launched = true, running+1, runs+1, true
				go func(n int, event string) {
					r := p.wait()
					mu.Lock()
					last[n] = append(last[n], event+": "+lastLines(r.stdout+r.stderr, 12))
					mu.Unlock()
					if r.exit != 0 {
						// Why, for the figures' reader: the run's last error line.
						why := ""
						for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
							if strings.HasPrefix(l, "::error") {
								why = l
							}
						}
						b.Logf("#%d: a %s run failed (exit %d): %s", n, event, r.exit, why)
						n = -n
					}
					done <- n
				}(j.n, j.event)
			}
			if launched && len(queue) > 0 {
				continue
			}
			if running == 0 {
				continue
			}
			n := <-done
			if n < 0 {
				failed++
				n = -n
			}
			busy[n], running = false, running-1
		}
		wall := time.Since(start)
		inReview := 0
		for _, n := range ns {
			if e.state(n) == workflow.InReview {
				inReview++
			}
		}
		reqs, w := e.srv.Requests(), 0
		for _, r := range reqs {
			if r.Write() && r.Status != 403 { // answered: a refusal takes no place in the window
				w++
			}
		}
		floor := time.Duration(float64(w) / writes * float64(window))
		b.ReportMetric(float64(issues), "issues")
		b.ReportMetric(float64(inReview), "in-review")
		b.ReportMetric(float64(runs), "runs")
		b.ReportMetric(float64(failed), "failed-runs")
		b.ReportMetric(float64(len(reqs))/float64(runs), "requests/step")
		b.ReportMetric(float64(len(e.srv.Refusals())), "403s")
		b.ReportMetric(float64(e.srv.InsideWindow()), "inside-window")
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(wall.Seconds()/floor.Seconds(), "wall/floor")
		if inReview != issues {
			b.Errorf("%d of %d issues reached In Review", inReview, issues)
			for _, n := range ns {
				if st := e.state(n); st != workflow.InReview {
					// Where it stopped and what its record says: the issue waits for whom?
					b.Logf("#%d is %s; its labels %v; its status comment:\n%s", n, st, e.srv.Labels(n), e.statusComment(n))
					for _, d := range e.srv.Dispatches() {
						if fmt.Sprint(d.Inputs["issue"]) == strconv.Itoa(n) {
							b.Logf("#%d: dispatched %v", n, d.Inputs)
						}
					}
					mu.Lock()
					for _, l := range last[n] {
						b.Logf("#%d: a run of %s", n, l)
					}
					mu.Unlock()
				}
			}
		}
	}
}

// lastLines is the last k lines of out.
func lastLines(out string, k int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}
