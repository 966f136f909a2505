// Package doctor checks that ralph can run in a repository and says, for each problem, what to do: the
// config, the agent, the workflow file, and, with a GitHub client, the token, the repository's settings,
// secrets and labels. gh ralph doctor runs them all; the Action runs those that cost no request before it
// writes anything.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Finding is one thing checked: what was found and, for a problem, what to do.
type Finding struct {
	Problem bool
	// Warn is something that works here but is likely wrong elsewhere: not a problem, shown with "!".
	Warn bool
	Msg  string
	Fix  string
}

// String is the finding on one line: "✓ msg", "! msg: fix" or "X msg: fix".
func (f Finding) String() string {
	if f.Warn && !f.Problem {
		return "! " + f.Msg + ": " + f.Fix
	}
	if !f.Problem {
		return "✓ " + f.Msg
	}
	if f.Fix == "" {
		return "X " + f.Msg
	}
	return "X " + f.Msg + ": " + f.Fix
}

func ok(format string, args ...any) Finding { return Finding{Msg: fmt.Sprintf(format, args...)} }

func problem(msg, fix string) Finding { return Finding{Problem: true, Msg: msg, Fix: fix} }

// Problems are the findings that are problems.
func Problems(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Problem {
			out = append(out, f)
		}
	}
	return out
}

// Place is where the agent would run: here (gh ralph advance) or in the Action; the advice differs.
type Place int

const (
	Here Place = iota
	InAction
)

// Agent checks that the agent can run, as Start does before a step (agent.Preflight, a key for a
// preset's CLI, its version), and says what was found.
func Agent(ctx context.Context, cfg config.Config, env []string, sb sandbox.Config, where Place) []Finding {
	info, err := Start(ctx, cfg, env, sb, nil, where)
	var fs []Finding
	for _, line := range info {
		if strings.HasPrefix(line, "agent: ") {
			fs = append(fs, ok("%s", line))
		}
	}
	var se *StartError
	switch {
	case errors.As(err, &se):
		fs = append(fs, se.Problems...)
	case err != nil:
		fs = append(fs, problem(err.Error(), ""))
	case cfg.Agent.Preset == "command":
		fs = append(fs, ok("agent: the command %s", cfg.Agent.Command))
	}
	if w, ok := MachineCommand(cfg, agent.Getenv(env, "HOME")); ok {
		fs = append(fs, w)
	}
	if err == nil && len(cfg.Agent.Env) > 0 {
		fs = append(fs, ok("agent.env passes %s to the agent", strings.Join(sortedKeys(cfg.Agent.Env), ", ")))
	}
	// A kernel that cannot hold the agent to the allow-list, required, is already a problem of Start's.
	if f, said := Network(cfg); said && !(f.Problem && se != nil) {
		fs = append(fs, f)
	}
	if f, said := Firewall(cfg, sb); said {
		fs = append(fs, f)
	}
	return fs
}

// MachineCommand warns when agent.command names a program by a path only this machine is likely to have
// (under a home or temporary directory): it runs here, and fails on the Action's runner.
func MachineCommand(cfg config.Config, home string) (Finding, bool) {
	if cfg.Agent.Preset != "command" {
		return Finding{}, false
	}
	p := agent.MachinePath(cfg.Agent.Command, home)
	if p == "" {
		return Finding{}, false
	}
	return Finding{Warn: true, Msg: "agent.command runs " + p + ", a path on this machine that the Action's runner does not have",
		Fix: "commit the program to the repository and run it as ./<its path> (or install it in the workflow before ralph's step) for steps in GitHub Actions"}, true
}

// missingKeys says where to set the variables agent.env passes through.
func missingKeys(missing []string, where Place) Finding {
	msg := fmt.Sprintf("agent.env passes %s through, but it is not set", strings.Join(missing, ", "))
	if where == InAction {
		var lines []string
		for _, m := range missing {
			lines = append(lines, fmt.Sprintf("%s: ${{ secrets.%s }}", m, m))
		}
		return problem(msg, "give it to ralph's step in the workflow (env: "+strings.Join(lines, ", ")+") and store the secret (gh secret set "+missing[0]+")")
	}
	return problem(msg+" here", "export "+missing[0]+"=… in your shell before gh ralph advance (only needed to run steps on this machine)")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WorkflowFile checks the workflow that runs ralph, as it is in the checkout: that it exists, that the
// chain can dispatch it, that the Actions token gets the permissions ralph needs, and that it gives ralph's
// step what agent.env passes through and the project token a board needs.
func WorkflowFile(wf *Workflow, cfg config.Config) []Finding {
	if wf == nil {
		return []Finding{problem("no workflow in .github/workflows uses "+agent.ActionRef, "run gh ralph init, which writes .github/workflows/ralph.yml, then commit and push it")}
	}
	var fs []Finding
	switch {
	case wf.Dispatchable:
		fs = append(fs, ok("%s runs ralph and can be dispatched (workflow_dispatch with an issue input)", wf.Path))
	case cfg.Chain:
		fs = append(fs, problem(wf.Path+" has no workflow_dispatch trigger with an issue input, so ralph cannot start its next step (chain: true)",
			"add on: workflow_dispatch: inputs: issue: {required: true} (as gh ralph init writes it), or set chain: false in "+config.DefaultPath))
	default:
		fs = append(fs, ok("%s runs ralph", wf.Path))
	}
	if wf.Permissions != nil {
		var missing []string
		for _, s := range Scopes {
			if s == "actions" && !cfg.Chain {
				continue
			}
			if wf.Permissions[s] != "write" {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			var lines []string
			for _, m := range missing {
				lines = append(lines, m+": write")
			}
			fs = append(fs, problem(fmt.Sprintf("%s does not give the Actions token %s", wf.Path, strings.Join(lines, ", ")),
				"set "+strings.Join(lines, ", ")+" under permissions: in "+wf.Path+" (ralph pushes branches, writes issues, opens pull requests and dispatches its workflow)"))
		} else {
			fs = append(fs, ok("%s gives the token contents, issues, pull-requests and actions: write", wf.Path))
		}
	}
	if f, bad := imageFinding(wf, cfg); bad {
		fs = append(fs, f)
	}
	fs = append(fs, fixFindings(wf)...)
	for _, k := range sortedKeys(cfg.Agent.Env) {
		if cfg.Agent.Env[k] != "" {
			continue
		}
		if _, ok := wf.Env[k]; !ok {
			fs = append(fs, problem(fmt.Sprintf("%s does not give ralph's step %s, which agent.env passes to the agent", wf.Path, k),
				fmt.Sprintf("add env: %s: ${{ secrets.%s }} to the step that uses %s", k, k, agent.ActionRef)))
		}
	}
	if cfg.Project != nil && strings.TrimSpace(wf.With["project_token"]) == "" {
		fs = append(fs, problem(fmt.Sprintf("project: is set in %s, but %s passes no project_token, so the board is not updated (the Actions token cannot reach Projects)", config.DefaultPath, wf.Path),
			"store a token with the project scope (gh secret set RALPH_PROJECT_TOKEN) and add project_token: ${{ secrets.RALPH_PROJECT_TOKEN }} under with:"))
	}
	return fs
}

// imageFinding is a problem when the step's image has not the CLI agent.preset runs: each agent's CLI is
// in the image of its own action (agent.ActionOf), and agent.command, when set, replaces the CLI.
func imageFinding(wf *Workflow, cfg config.Config) (Finding, bool) {
	preset := cfg.Agent.Preset
	if !slices.Contains(agent.ImageAgents, preset) || cfg.Agent.Command != "" || wf.Agent == preset {
		return Finding{}, false
	}
	has := "no agent CLI"
	if wf.Agent != "" {
		has = "the CLI of " + wf.Agent + " only"
	}
	return problem(fmt.Sprintf("%s uses %s, whose image has %s, and agent.preset is %s", wf.Path, agent.ActionOf(wf.Agent), has, preset),
		fmt.Sprintf("use %s@<the same version> in %s (its image holds the CLI of %s)", agent.ActionOf(preset), wf.Path, preset)), true
}

// FixStep is in the message of every finding about what the fix step needs of the workflow: that step
// alone is missing without it, so none of them stops a run from starting.
const FixStep = "(the fix step)"

// fixFindings checks what the fix step needs of the workflow: the events that start it, and a token that
// can read the checks of ralph's pull requests and the logs of their failed jobs.
func fixFindings(wf *Workflow) []Finding {
	var fs []Finding
	for _, alternatives := range FixEvents {
		if !slices.ContainsFunc(alternatives, func(e string) bool { return slices.Contains(wf.Events, e) }) {
			what := map[string]string{
				"pull_request_review": "a review that requests changes on ralph's pull request does not reach ralph",
				"workflow_run":        "checks that fail on ralph's pull request do not reach ralph",
			}[alternatives[0]]
			add := map[string]string{
				"pull_request_review": "pull_request_review: {types: [submitted]}",
				"workflow_run":        "workflow_run: {workflows: [<your CI workflow's name>], types: [completed]} (or check_suite: {types: [completed]} for another CI service)",
			}[alternatives[0]]
			fs = append(fs, problem(fmt.Sprintf("%s does not start on %s: %s %s", wf.Path, strings.Join(alternatives, " or "), what, FixStep),
				"add under on: in "+wf.Path+": "+add+", as gh ralph init writes it"))
		}
	}
	if wf.Permissions == nil {
		return fs
	}
	var missing []string
	for _, s := range append([]string{"actions"}, ReadScopes...) {
		if p := wf.Permissions[s]; p != "read" && p != "write" {
			missing = append(missing, s+": read")
		}
	}
	if len(missing) > 0 {
		fs = append(fs, problem(fmt.Sprintf("%s does not let the Actions token read %s: ralph cannot read why checks failed on its pull request %s",
			wf.Path, strings.Join(missing, ", "), FixStep), "set "+strings.Join(missing, ", ")+" under permissions: in "+wf.Path+" (actions: write, which the chain needs, includes read)"))
	} else {
		fs = append(fs, ok("%s lets the token read the checks and job logs of ralph's pull requests", wf.Path))
	}
	return fs
}

// GitHub is what the checks read of GitHub; *ghapi.Client implements it.
type GitHub interface {
	Access(ctx context.Context) (ghapi.Access, error)
	Labels(ctx context.Context) ([]ghapi.Label, error)
	Workflow(ctx context.Context, file string) (ghapi.Workflow, error)
	SecretNames(ctx context.Context) ([]string, error)
	ActionsPermissions(ctx context.Context) (ghapi.ActionsPermissions, error)
	WorkflowPermissions(ctx context.Context) (ghapi.WorkflowPermissions, error)
	Owner() string
	Repo() string
	Endpoints() ghapi.Endpoints
}

var _ GitHub = (*ghapi.Client)(nil)

// LabelNames are ralph's labels: ralph:build, the state labels and ralph:needs-iteration.
func LabelNames() []string {
	names := []string{workflow.LabelBuild}
	for _, s := range workflow.States() {
		names = append(names, s.Label())
	}
	return append(names, workflow.LabelNeedsIteration)
}

// Repository checks, with the person's token, what ralph needs of the repository on GitHub: that the token
// may push (and, a classic token, push workflow files and reach a board), ralph's labels, the workflow on
// the default branch, the secrets it reads, and the Actions settings. A token GitHub refuses (401) is the
// error, and nothing else is asked: every other request would be refused the same way.
func Repository(ctx context.Context, gh GitHub, cfg config.Config, wf *Workflow) ([]Finding, error) {
	full := gh.Owner() + "/" + gh.Repo()
	var fs []Finding
	access, err := gh.Access(ctx)
	var api *ghapi.Error
	if errors.As(err, &api) && api.Status == 401 {
		return nil, fmt.Errorf("checking %s: %w", full, err)
	}
	switch {
	case err != nil:
		fs = append(fs, problem("reading "+full+": "+err.Error(), ""))
	case !access.Push:
		fs = append(fs, problem("your token cannot push to "+full, "ask for write access: ralph pushes branches and writes issues as you"))
	default:
		fs = append(fs, ok("your token can push to %s", full))
	}
	if access.Scopes != nil {
		if !slices.Contains(access.Scopes, "workflow") {
			fs = append(fs, problem("your token lacks the workflow scope, which pushing .github/workflows/ralph.yml needs", "gh auth refresh -s workflow"))
		}
		if cfg.Project != nil && !slices.Contains(access.Scopes, "project") {
			fs = append(fs, problem("your token lacks the project scope, which the board of project: needs", "gh auth refresh -s project"))
		}
	}
	have, err := gh.Labels(ctx)
	if err != nil {
		fs = append(fs, problem("listing the labels: "+err.Error(), ""))
	} else {
		exists := map[string]bool{}
		for _, l := range have {
			exists[strings.ToLower(l.Name)] = true
		}
		var missing []string
		for _, n := range LabelNames() {
			if !exists[strings.ToLower(n)] {
				missing = append(missing, n)
			}
		}
		switch {
		case len(missing) == len(LabelNames()):
			fs = append(fs, problem(fmt.Sprintf("none of ralph's %d labels exist", len(missing)), "gh ralph init creates them"))
		case len(missing) > 0:
			fs = append(fs, problem(fmt.Sprintf("%d of ralph's %d labels are missing (%s)", len(missing), len(LabelNames()), strings.Join(missing, ", ")), "gh ralph init creates them"))
		default:
			fs = append(fs, ok("all %d of ralph's labels exist", len(LabelNames())))
		}
	}
	if wf != nil {
		w, err := gh.Workflow(ctx, wf.File())
		switch {
		case errors.Is(err, ghapi.ErrNotFound):
			fs = append(fs, problem(wf.Path+" is not on the default branch on GitHub, so nothing runs it", "commit and push it to the default branch"))
		case err != nil:
			fs = append(fs, problem("reading the workflow "+wf.File()+": "+err.Error(), ""))
		case w.State != "active":
			fs = append(fs, problem(fmt.Sprintf("the workflow %s is %s", wf.Path, strings.ReplaceAll(w.State, "_", " ")), "gh workflow enable "+wf.File()))
		default:
			fs = append(fs, ok("%s is active on GitHub", wf.Path))
		}
		fs = append(fs, secrets(ctx, gh, wf)...)
	}
	return append(fs, Settings(ctx, gh, wf)...), nil
}

// Settings checks the repository's Actions settings that ralph needs: Actions enabled for its actions, the
// Actions token's permissions (when the workflow sets none), and, when ralph runs with the Actions token,
// that Actions may open pull requests.
func Settings(ctx context.Context, gh GitHub, wf *Workflow) []Finding {
	full := gh.Owner() + "/" + gh.Repo()
	settings := strings.TrimSuffix(gh.Endpoints().Server, "/") + "/" + full + "/settings/actions"
	var fs []Finding
	ap, err := gh.ActionsPermissions(ctx)
	switch {
	case err != nil:
		fs = append(fs, notReadable("the repository's Actions permissions", err, settings))
	case !ap.Enabled:
		fs = append(fs, problem("GitHub Actions are disabled in "+full, "enable them in "+settings+" (Actions permissions)"))
	case ap.AllowedActions == "local_only":
		fs = append(fs, problem(full+" allows only its own actions, so "+agent.ActionRef+" and actions/checkout cannot run", "allow them in "+settings+" (Actions permissions)"))
	default:
		fs = append(fs, ok("GitHub Actions are enabled (%s actions allowed)", orAll(ap.AllowedActions)))
	}
	if ap.SHAPinning && wf != nil {
		fs = append(fs, ok("the repository requires actions pinned by commit SHA: keep every uses: in %s pinned", wf.Path))
	}
	wp, err := gh.WorkflowPermissions(ctx)
	switch {
	case err != nil:
		fs = append(fs, notReadable("the Actions token's default permissions", err, settings))
	default:
		if wf != nil && wf.Permissions == nil && wp.Default != "write" {
			fs = append(fs, problem(wf.Path+" sets no permissions: and the Actions token is read-only by default here",
				"add permissions: contents, issues, pull-requests, actions: write to "+wf.Path+" (as gh ralph init writes it)"))
		}
		if wf == nil || wf.ActionsToken() {
			if !wp.CanCreatePulls {
				fs = append(fs, problem("GitHub Actions may not create pull requests in "+full+", so ralph's pr step would fail",
					"in "+settings+" under Workflow permissions, check \"Allow GitHub Actions to create and approve pull requests\" "+
						"(or: gh api -X PUT repos/"+full+"/actions/permissions/workflow -F can_approve_pull_request_reviews=true), or give ralph a GitHub App's token"))
			} else {
				fs = append(fs, ok("GitHub Actions may create pull requests; they start no pull_request workflows, so your CI does not run on them (README: CI on ralph's pull requests)"))
			}
		}
	}
	return fs
}

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

// notReadable: GitHub answers the Actions settings only to a repository admin.
func notReadable(what string, err error, settings string) Finding {
	var api *ghapi.Error
	if errors.As(err, &api) && (api.Status == 403 || api.Status == 404) {
		return problem("cannot read "+what+" (GitHub shows them only to admins)", "ask an admin to check "+settings)
	}
	return problem("reading "+what+": "+err.Error(), "")
}

// secrets checks that the secrets the workflow gives ralph's step exist.
func secrets(ctx context.Context, gh GitHub, wf *Workflow) []Finding {
	want := map[string]string{} // secret -> what it is for
	for k, v := range wf.Env {
		if s := SecretOf(v); s != "" {
			want[s] = "env " + k
		}
	}
	for _, in := range []string{"token", "project_token"} {
		if s := SecretOf(wf.With[in]); s != "" {
			want[s] = "input " + in
		}
	}
	if len(want) == 0 {
		return nil
	}
	names, err := gh.SecretNames(ctx)
	if err != nil {
		return []Finding{problem("listing the repository's secrets: "+err.Error(), "check that "+strings.Join(sortedKeys(want), ", ")+" are set (gh secret list)")}
	}
	var fs []Finding
	for _, s := range sortedKeys(want) {
		if slices.Contains(names, s) {
			fs = append(fs, ok("the secret %s is set (%s of ralph's step)", s, want[s]))
			continue
		}
		fs = append(fs, problem(fmt.Sprintf("the secret %s, which %s gives ralph's step as %s, is not set", s, wf.Path, want[s]), "gh secret set "+s))
	}
	return fs
}
