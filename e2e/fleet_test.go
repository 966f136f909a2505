package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
	"gopkg.in/yaml.v3"
)

// shippedWorkflow is a workflow of examples/ as a user copies it: its jobs, as GitHub reads them.
type shippedWorkflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Needs    string `yaml:"needs"`
		If       string `yaml:"if"`
		Strategy struct {
			Matrix map[string]string `yaml:"matrix"`
		} `yaml:"strategy"`
		Concurrency struct {
			Group string `yaml:"group"`
		} `yaml:"concurrency"`
		Steps []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// pushShipped copies examples/<example> into the repository as .github/workflows/<name>, as a user does,
// with the image of the tests' preset (preset: command runs in ralph-dev/gh-ralph, the slim image) instead
// of claude's, and returns it parsed.
func (e *env) pushShipped(example, name string) shippedWorkflow {
	e.t.Helper()
	b, err := os.ReadFile("../examples/" + example)
	if err != nil {
		e.t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "ralph-dev/gh-ralph/claude@v1", "ralph-dev/gh-ralph@v1")
	var wf shippedWorkflow
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		e.t.Fatalf("%s: %v", example, err)
	}
	e.pushFile(".github/workflows/"+name, text)
	return wf
}

var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// inputs are the with: of the job's ralph step, its expressions evaluated from vars (matrix.issue,
// inputs.command); an expression the test does not know fails it.
func (wf shippedWorkflow) inputs(t *testing.T, job string, vars map[string]string) map[string]string {
	t.Helper()
	j, ok := wf.Jobs[job]
	if !ok {
		t.Fatalf("no job %s", job)
	}
	for _, st := range j.Steps {
		if !strings.HasPrefix(st.Uses, "ralph-dev/gh-ralph") {
			continue
		}
		out := map[string]string{}
		for k, v := range st.With {
			if k == "token" {
				continue // the harness's token
			}
			var bad string
			out[k] = expr.ReplaceAllStringFunc(v, func(m string) string {
				name := expr.FindStringSubmatch(m)[1]
				val, ok := vars[name]
				if !ok {
					bad = name
				}
				return val
			})
			if bad != "" {
				t.Fatalf("job %s: with.%s uses ${{ %s }}, which the test does not know", job, k, bad)
			}
		}
		return out
	}
	t.Fatalf("job %s has no step that uses ralph", job)
	return nil
}

// The sweep example, copied as it is, reaches In Review in both its modes: its runs carry their issues on
// through ralph.yml's workflow_dispatch (the sweep's own has no issue input, and GitHub would refuse one).
func TestSweepExampleReachesInReview(t *testing.T) {
	t.Parallel()
	for _, matrix := range []bool{true, false} {
		t.Run(fmt.Sprintf("matrix_%v", matrix), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, baseConfig(t, fmt.Sprintf("sweep:\n  matrix: %v\n", matrix)))
			e.pushShipped("ralph.yml", "ralph.yml")
			sweep := e.pushShipped("sweep.yml", "ralph-sweep.yml")
			if _, ok := sweep.On["workflow_dispatch"]; !ok {
				t.Fatal("the sweep example has no workflow_dispatch")
			}
			if _, ok := sweep.On["schedule"]; !ok {
				t.Fatal("the sweep example has no schedule")
			}
			var issues []int
			for _, title := range []string{"Add a greeting", "Add a farewell"} {
				n := e.srv.CreateIssue("octocat", title, "Please.")
				e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
				issues = append(issues, n)
			}
			// The scheduled run: the sweep job, then the matrix job's runs, one per issue.
			schedule := map[string]any{"schedule": "*/15 * * * *"}
			r := e.start("schedule", schedule, sweep.inputs(t, "sweep", map[string]string{}), runOpts{workflow: "ralph-sweep.yml"}).wait()
			if r.exit != 0 {
				t.Fatalf("sweep job: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
			}
			var picked []int
			if err := json.Unmarshal([]byte(r.outputs["issues"]), &picked); err != nil {
				t.Fatalf("sweep job's issues output %q: %v", r.outputs["issues"], err)
			}
			advance := sweep.Jobs["advance"]
			if advance.Needs != "sweep" || advance.Strategy.Matrix["issue"] != "${{ fromJSON(needs.sweep.outputs.issues) }}" {
				t.Fatalf("the advance job is not the matrix over the sweep's issues: %+v", advance)
			}
			if matrix && len(picked) != len(issues) || !matrix && len(picked) != 0 {
				t.Fatalf("sweep job's issues = %v (matrix %v)", picked, matrix)
			}
			// The advance job's if: skips it when the sweep left nothing ('[]').
			for _, n := range picked {
				in := sweep.inputs(t, "advance", map[string]string{"matrix.issue": fmt.Sprint(n)})
				if advance.Concurrency.Group != "ralph-${{ matrix.issue }}" {
					t.Fatalf("the advance job's concurrency group %q is not ralph.yml's per issue", advance.Concurrency.Group)
				}
				r := e.start("schedule", schedule, in, runOpts{workflow: "ralph-sweep.yml"}).wait()
				if r.exit != 0 {
					t.Fatalf("advance job for #%d: exit %d\n%s%s", n, r.exit, r.stdout, r.stderr)
				}
			}
			// The dispatches: runs of ralph.yml (e.next checks the file), until none is left.
			e.chain(40)
			for _, n := range issues {
				e.wantState(n, workflow.InReview)
			}
		})
	}
}

// The label workflow in the checkout as init writes it: a label starts the chain, which reaches In Review.
func TestLabelExampleReachesInReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	wf := e.pushShipped("ralph.yml", "ralph.yml")
	if _, ok := wf.On["issues"]; !ok {
		t.Fatal("ralph.yml has no issues trigger")
	}
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please.")
	if r := e.label(n, maintainer); r.exit != 0 {
		t.Fatalf("label run: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.chain(20)
	e.wantState(n, workflow.InReview)
}

// runName is what GitHub titles a dispatched run of examples/ralph.yml: its run-name evaluated for the
// dispatch's inputs.
func runName(t *testing.T) func(inputs map[string]any) string { return runNameTB(t) }

func runNameTB(t testing.TB) func(inputs map[string]any) string {
	t.Helper()
	b, err := os.ReadFile("../examples/ralph.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		RunName string `yaml:"run-name"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	const want = "${{ (inputs.issue || github.event.issue.number) && format('ralph #{0}', inputs.issue || github.event.issue.number) || format('ralph {0}', github.event_name) }}"
	if wf.RunName != want {
		t.Fatalf("examples/ralph.yml's run-name is %q; the test evaluates %q", wf.RunName, want)
	}
	return func(inputs map[string]any) string {
		if n, ok := inputs["issue"]; ok && fmt.Sprint(n) != "" {
			return fmt.Sprintf("ralph #%v", n)
		}
		return "ralph workflow_dispatch"
	}
}

// A sweep passes over an issue whose chain's next run is dispatched and not yet started, spending no
// request on it beyond one listing of the runs not finished.
func TestSweepSkipsQueuedChains(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, baseConfig(t, "sweep:\n  matrix: true\n"), githubtest.Options{RunName: runName(t)})
	e.pushShipped("ralph.yml", "ralph.yml")
	chained := e.srv.CreateIssue("octocat", "Add a greeting", "Please.")
	if r := e.label(chained, maintainer); r.exit != 0 || len(e.srv.Dispatches()) != 1 {
		t.Fatalf("label run: exit %d, %d dispatches\n%s%s", r.exit, len(e.srv.Dispatches()), r.stdout, r.stderr)
	}
	idle := e.srv.CreateIssue("octocat", "Add a farewell", "Please.")
	e.srv.AddLabel(idle, workflow.LabelBuild, maintainer)
	before := len(e.srv.Requests())
	r := e.run("schedule", map[string]any{"schedule": "*/15 * * * *"}, nil)
	if r.exit != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if got, want := r.outputs["issues"], fmt.Sprintf("[%d]", idle); got != want {
		t.Errorf("sweep picked %s, want %s (#%d's next run is queued)\n%s", got, want, chained, r.stdout)
	}
	about := fmt.Sprintf("/issues/%d/", chained)
	for _, req := range e.srv.Requests()[before:] {
		if strings.Contains(req.Path+"/", about) {
			t.Errorf("the sweep asked about #%d: %s %s", chained, req.Method, req.Path)
		}
	}
}
