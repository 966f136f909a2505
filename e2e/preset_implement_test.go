package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Where each CLI's system prompt names its working directory, the worktree of the step.
var (
	opencodeWorkdir = regexp.MustCompile(`Working directory: (/[^\\"\s]+)`)
	copilotWorkdir  = regexp.MustCompile(`working directory[^/]*(/[^\\"\s<]+)`)
)

// stepDocument is the document path ralph's prompt gives a step, as the request's JSON carries it: an
// absolute path alone on an indented line, under thoughts/shared/<folder>/.
var stepDocument = regexp.MustCompile(`\\n {4}(/[^\\"]+/thoughts/shared/(research|plans|reviews)/[^\\"]+\.md)\\n`)

// implementPhaseFlow runs issue 1 with the preset from its label through research, plan, review and the
// first implement phase, every run through the built binary with the real CLI against one scripted
// Anthropic model behind ralph's gateway: the model has the CLI write each step's document, then, in the
// phase, the file the plan asks for. extraConfig ends the config. It returns the env, the model and the
// implement run.
func implementPhaseFlow(t *testing.T, preset string, workdir *regexp.Regexp, extraConfig string) (*env, *agenttest.Anthropic, result) {
	t.Helper()
	bin := agentsBin(t, preset)
	model := agenttest.NewAnthropicSteps(t, modelKey, func(req string) (string, string) {
		if m := stepDocument.FindStringSubmatch(req); m != nil {
			switch m[2] {
			case "research":
				return m[1], "# Research: greeting\n\nA greeting goes in greeting.txt.\n"
			case "plans":
				return m[1], "# Plan: greeting\n\n## Phase 1: Write the greeting\n\nAdd greeting.txt.\n"
			case "reviews":
				return m[1], "# Review\n\nThe plan is sound.\n\nVERDICT: APPROVED\n"
			}
		}
		if strings.Contains(req, "## Your task: phase 1 of 1") {
			if m := workdir.FindStringSubmatch(req); m != nil {
				return m[1] + "/greeting.txt", "Hello from " + preset + ".\n"
			}
		}
		return "", ""
	})
	e := newEnv(t, "agent:\n  preset: "+preset+"\n  max_turns: 10\n  timeout: 3m\n  max_cost: 1\n"+
		"self_review: false\ngateway:\n  upstream: "+model.URL+"\n"+extraConfig)
	opts := runOpts{env: map[string]string{"PATH": bin + ":" + os.Getenv("PATH"), "ANTHROPIC_API_KEY": modelKey}}
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.start("issues", labeledEvent(t, n, workflow.LabelBuild, maintainer), nil, opts).wait()
	for range 5 {
		if r.exit != 0 {
			t.Fatalf("%s: exit %d outputs %v\n%s%s\nscripted model: %q", r.outputs["step"], r.exit, r.outputs, r.stdout, r.stderr, model.Problems())
		}
		if r.outputs["step"] == "implement" {
			return e, model, r
		}
		ds := e.srv.Dispatches()
		if e.seen >= len(ds) {
			t.Fatalf("the flow stopped after %s in %s", r.outputs["step"], r.outputs["state"])
		}
		d := ds[e.seen]
		e.seen++
		r = e.start("workflow_dispatch", dispatchEvent(t, d.Inputs), nil, opts).wait()
	}
	t.Fatalf("no implement phase after 5 runs")
	return nil, nil, result{}
}

// checkImplementPhase: the phase's file is committed on the branch, the model saw no unexpected request,
// and the record's usage over the flow is what ralph's gateway metered of the model's bills.
func checkImplementPhase(t *testing.T, e *env, model *agenttest.Anthropic, preset string) {
	t.Helper()
	for _, p := range model.Problems() {
		t.Errorf("scripted model: %s", p)
	}
	subjects, files := e.branch(branch)
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":greeting.txt"); got != "Hello from "+preset+"." {
		t.Errorf("greeting.txt on the branch = %q; files %v", got, files)
	}
	if len(matching(subjects, "Phase 1")) != 1 {
		t.Errorf("no phase commit on the branch: %v", subjects)
	}
	rec, ok, err := record.Parse(e.statusComment(1))
	if err != nil || !ok || rec.Usage == nil {
		t.Fatalf("no usage in the record: %v %v", ok, err)
	}
	// Two agent turns a step (the write, then the answer to its result), four steps; the record sums every
	// request the gateway metered, side requests (opencode's titles, priced lower) included.
	turns, b, u := model.Turns(), model.Billed(), *rec.Usage
	if turns != 8 || u.Turns != turns || !u.Metered || u.Requests != b.Requests || u.InputTokens != b.InputTokens ||
		u.CacheReadTokens != b.CachedTokens || u.OutputTokens != b.OutputTokens ||
		u.CostUSD < float64(turns)*perAnswer(t)-1e-9 || u.CostUSD > float64(b.Requests)*perAnswer(t)+1e-9 {
		t.Errorf("recorded usage %+v; the model answered %d turns and billed %+v over the flow, at most $%.6f an answer", u, turns, b, perAnswer(t))
	}
}

// TestPresetOpencodeRealCLIImplement: the real opencode goes through a whole flow up to its first implement
// phase (research, plan, review, phase 1), each step's model calls through ralph's gateway and metered.
func TestPresetOpencodeRealCLIImplement(t *testing.T) {
	t.Parallel()
	e, model, _ := implementPhaseFlow(t, "opencode", opencodeWorkdir, "")
	checkImplementPhase(t, e, model, "opencode")
}

// TestPresetCopilotRealCLIImplement: the same with the real GitHub Copilot CLI.
func TestPresetCopilotRealCLIImplement(t *testing.T) {
	t.Parallel()
	e, model, _ := implementPhaseFlow(t, "copilot", copilotWorkdir, "")
	checkImplementPhase(t, e, model, "copilot")
}

// TestPresetCopilotRealCLIImplementBudget: with budget.issue between what research, plan and review spent
// (six answers at the same price) and what the phase's first answer brings, ralph's gateway lets the
// phase's first model request through and refuses the next: the file the phase wrote is committed as the
// phase, and the issue goes to a person saying to raise budget.issue.
func TestPresetCopilotRealCLIImplementBudget(t *testing.T) {
	t.Parallel()
	e, model, r := implementPhaseFlow(t, "copilot", copilotWorkdir, "budget:\n  issue: "+ftoa(6.5*perAnswer(t))+"\n")
	if r.outputs["state"] != "human-needed" {
		t.Fatalf("implement at the issue's budget: outputs %v\n%s", r.outputs, r.stdout)
	}
	if b := model.Billed(); b.Requests != 7 {
		t.Errorf("the model billed %d requests, want 7: the gateway refuses the phase's second", b.Requests)
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":greeting.txt"); got != "Hello from copilot." {
		t.Errorf("greeting.txt on the branch = %q, want the phase's file kept", got)
	}
	if rec := e.record(1); !strings.Contains(rec.Reason, "raise `budget.issue`") || rec.Usage == nil || rec.Usage.Requests != 7 {
		t.Errorf("the record: %s, %+v", rec.Reason, rec.Usage)
	}
}

// TestPresetOpencodeRealCLIImplementBudget: the same with opencode, whose steps each cost two answers and a
// cheaper side request (its session's title): about seven answers before the phase, which sends its first
// turn and its title together; budget.issue at seven and a half answers lets those through and refuses
// the phase's second turn.
func TestPresetOpencodeRealCLIImplementBudget(t *testing.T) {
	t.Parallel()
	e, model, r := implementPhaseFlow(t, "opencode", opencodeWorkdir, "budget:\n  issue: "+ftoa(7.5*perAnswer(t))+"\n")
	if r.outputs["state"] != "human-needed" {
		t.Fatalf("implement at the issue's budget: outputs %v\n%s", r.outputs, r.stdout)
	}
	if model.Turns() != 7 {
		t.Errorf("the model answered %d agent turns, want 7: the gateway refuses the phase's second", model.Turns())
	}
	if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":greeting.txt"); got != "Hello from opencode." {
		t.Errorf("greeting.txt on the branch = %q, want the phase's file kept", got)
	}
	if rec := e.record(1); !strings.Contains(rec.Reason, "raise `budget.issue`") || rec.Usage == nil || rec.Usage.Requests != model.Billed().Requests {
		t.Errorf("the record: %s, %+v; the model billed %+v", rec.Reason, rec.Usage, model.Billed())
	}
}
