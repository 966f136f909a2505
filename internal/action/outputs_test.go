package action

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"gopkg.in/yaml.v3"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Outside GitHub Actions the outputs are name=value lines on standard output; cost and tokens add up
// what the agent reported over the run's steps.
func TestOutputsWithoutActions(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	getenv := func(string) string { return "" }
	r := &runner{a: workflowCommands{githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&out))}, env: Env{Getenv: getenv, Stdout: &out}}
	r.results = []engine.Result{
		{Issue: 3, Step: workflow.Research, Usage: &agent.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 0.25}},
		{Issue: 3, Step: workflow.Plan, From: workflow.ReadyForPlan, State: workflow.PlanInReview, Usage: &agent.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5}},
	}
	r.outputs()
	want := "issue=3\nstep=plan\nfrom_state=ready-for-plan\nstate=plan-in-review\npr_url=\npaused=false\ncost=0.75\ntokens=1215\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant\n%s", out.String(), want)
	}
}

// Every output the action sets is declared in action.yml and listed in the README's table, and nothing
// else is.
func TestOutputsDeclared(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	getenv := func(string) string { return "" }
	r := &runner{a: workflowCommands{githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&out))}, env: Env{Getenv: getenv, Stdout: &out}}
	r.results = []engine.Result{{Issue: 1}}
	r.issues = []int{}
	r.outputs()
	var set []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		name, _, _ := strings.Cut(line, "=")
		set = append(set, name)
	}
	slices.Sort(set)

	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Outputs map[string]any `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	var declared []string
	for k := range meta.Outputs {
		declared = append(declared, k)
	}
	slices.Sort(declared)
	if !slices.Equal(set, declared) {
		t.Errorf("outputs set %v, action.yml declares %v", set, declared)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range set {
		if !strings.Contains(string(readme), "| `"+name+"`") && !strings.Contains(string(readme), "`"+name+"`, `") && !strings.Contains(string(readme), ", `"+name+"` |") {
			t.Errorf("the README's outputs table does not list %s", name)
		}
	}
}

// SECURITY: ralph's log quotes text that is not its own (a file's name, a reason); no line of it is a
// workflow command for the runner.
func TestLogLinesAreNoCommands(t *testing.T) {
	for _, msg := range []string{
		"::add-mask::x",
		"failed: `a`\n::set-output name=step::merge\n  ::stop-commands::t",
		"see ##[set-env name=X]y",
		"\r\n::error::forged",
	} {
		got := plain(msg)
		for _, line := range strings.Split(got, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.Contains(line, "##[") {
				t.Errorf("plain(%q) has the line %q, a workflow command", msg, line)
			}
		}
		if strings.ReplaceAll(strings.ReplaceAll(got, "\u200b", ""), "\r", "") != strings.ReplaceAll(msg, "\r", "") {
			t.Errorf("plain(%q) = %q: more changed than the commands", msg, got)
		}
	}
}
