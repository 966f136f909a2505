package doctor

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"gopkg.in/yaml.v3"
)

// actionAgent is the agent of the image a step's uses: names, and whether it names ralph's action at all.
func actionAgent(uses string) (string, bool) {
	name, _, ok := strings.Cut(uses, "@")
	if !ok {
		return "", false
	}
	for _, a := range preset.Names() {
		if name == agent.ActionOf(a) {
			return a, true
		}
	}
	return "", name == agent.ActionRef
}

// Workflow is what ralph needs to know of the workflow file that runs it.
type Workflow struct {
	Path string // relative to the repository, slash-separated: .github/workflows/ralph.yml
	// Dispatchable: `on: workflow_dispatch` with an `issue` input, which the chain dispatches.
	Dispatchable bool
	// Commands: its workflow_dispatch has a `command` input too, through which a run GitHub failed carries
	// a person's command to the run that finishes it.
	Commands bool
	// Permissions of the Actions token for ralph's job (its own, else the workflow's); nil when neither
	// says, and the repository's default applies. write-all and read-all are expanded.
	Permissions map[string]string
	// Env is the environment ralph's step gets from the workflow, the job and the step.
	Env map[string]string
	// With are the inputs of ralph's step.
	With map[string]string
	// Events are the events that start the workflow (the keys of on:).
	Events []string
	// Agent is the agent whose CLI the step's image holds (ralph-dev/gh-ralph/<agent>); "" for the image
	// without one (ralph-dev/gh-ralph).
	Agent string
	// RunName is the workflow's run-name: the workflow init writes titles a run on one issue "ralph #N",
	// by which a sweep passes over an issue whose run is queued or running.
	RunName string
	// Chain is the workflow the chain dispatches (ResolveChain): this one, or another of the repository's
	// (a sweep's runs advance issues through the label workflow's dispatch); nil when there is none.
	Chain *Workflow
	// ChainProblem says why Chain is nil when the config names a workflow that cannot be dispatched.
	ChainProblem string
	// RunOf are the workflows whose runs start this one (on: workflow_run: workflows:), by name: the CI
	// whose failures start a fix round.
	RunOf []string
	// Named are the names of the repository's other workflows (ResolveWorkflowRun), by which workflow_run
	// finds them: each one's name:, or its path when it has none; nil when not read.
	Named []string
}

// ResolveWorkflowRun reads the names of the repository's other workflows in the checkout at root into
// wf.Named, for the check that workflow_run names one of them. It costs no request.
func ResolveWorkflowRun(root string, wf *Workflow) {
	if wf == nil {
		return
	}
	wf.Named = []string{}
	for _, f := range workflowFiles(root) {
		rel := ".github/workflows/" + filepath.Base(f)
		if rel == wf.Path {
			continue
		}
		b, err := ReadWorkflowFile(f)
		if err != nil {
			continue
		}
		var head struct {
			Name string `yaml:"name"`
		}
		if yaml.Unmarshal(b, &head) != nil {
			continue
		}
		name := strings.TrimSpace(head.Name)
		if name == "" {
			name = rel // GitHub names a workflow without name: by its path
		}
		wf.Named = append(wf.Named, name)
	}
}

// ResolveChain finds, in the checkout at root, the workflow the chain dispatches for wf's runs and sets
// wf.Chain: the one the config's workflow: names, else wf itself when its workflow_dispatch has an issue
// input, else the repository's first workflow (by name) that runs ralph and has one. It costs no request.
func ResolveChain(root string, wf *Workflow, cfg config.Config) {
	if wf == nil {
		return
	}
	wf.Chain, wf.ChainProblem = nil, ""
	if cfg.Workflow != "" {
		rel := ".github/workflows/" + cfg.Workflow
		b, err := ReadWorkflowFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			wf.ChainProblem = fmt.Sprintf("workflow: %s in %s names no readable workflow (%v)", cfg.Workflow, config.DefaultPath, err)
			return
		}
		named, err := ParseWorkflow(rel, b)
		switch {
		case err != nil:
			wf.ChainProblem = fmt.Sprintf("workflow: %s in %s: %v", cfg.Workflow, config.DefaultPath, err)
		case named == nil || !named.Dispatchable:
			wf.ChainProblem = fmt.Sprintf("workflow: %s in %s names %s, which does not run ralph on a workflow_dispatch with an issue input", cfg.Workflow, config.DefaultPath, rel)
		default:
			wf.Chain = named
		}
		return
	}
	if wf.Dispatchable {
		wf.Chain = wf
		return
	}
	for _, f := range workflowFiles(root) {
		b, err := ReadWorkflowFile(f)
		if err != nil || !strings.Contains(string(b), agent.ActionRef) {
			continue
		}
		other, err := ParseWorkflow(".github/workflows/"+filepath.Base(f), b)
		if err == nil && other != nil && other.Dispatchable {
			wf.Chain = other
			return
		}
	}
}

// workflowFiles are the repository's workflow files at root, by name.
func workflowFiles(root string) []string {
	var files []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", pattern))
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// Scopes ralph's token needs written, as the workflow's permissions: names them.
var Scopes = []string{"contents", "issues", "pull-requests", "actions"}

// ReadScopes ralph's token needs to read: the check runs of its pull requests, for the fix step.
var ReadScopes = []string{"checks"}

// FixEvents start the fix step: a review that requests changes, and failed checks (workflow_run for
// GitHub Actions' own, check_suite for other CI services'; either will do).
var FixEvents = [][]string{{"pull_request_review"}, {"workflow_run", "check_suite"}}

// FindWorkflow looks in the checkout at root for the workflow file with a step that uses ralph's action;
// nil when there is none.
func FindWorkflow(root string) (*Workflow, error) {
	for _, f := range workflowFiles(root) {
		b, err := ReadWorkflowFile(f)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(string(b), agent.ActionRef) {
			continue
		}
		rel := ".github/workflows/" + filepath.Base(f)
		wf, err := ParseWorkflow(rel, b)
		if err != nil {
			return nil, err
		}
		if wf != nil {
			return wf, nil
		}
	}
	return nil, nil
}

// maxWorkflowFile bounds a workflow file ralph reads: GitHub's own limit for a workflow is 512 KiB.
const maxWorkflowFile = 1 << 20

// ReadWorkflowFile reads the workflow file at path: a regular file only (not a link, which could name
// /dev/zero or a FIFO, nor anything else that could keep the read from ending), opened without following
// a link and without blocking, and at most maxWorkflowFile bytes.
func ReadWorkflowFile(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): ralph reads no workflow through a link", path, fi.Mode().Type())
	}
	if fi.Size() > maxWorkflowFile {
		return nil, fmt.Errorf("%s is %d bytes, more than a workflow file can be (%d)", path, fi.Size(), maxWorkflowFile)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if got, err := f.Stat(); err != nil || !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		return nil, fmt.Errorf("%s changed while ralph read it", path)
	}
	return io.ReadAll(io.LimitReader(f, maxWorkflowFile))
}

type rawWorkflow struct {
	RunName     string            `yaml:"run-name"`
	On          yaml.Node         `yaml:"on"`
	Permissions yaml.Node         `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]struct {
		Permissions yaml.Node         `yaml:"permissions"`
		Env         map[string]string `yaml:"env"`
		Steps       []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// ParseWorkflow reads a workflow file; nil when no step of it uses ralph's action.
func ParseWorkflow(rel string, b []byte) (*Workflow, error) {
	var raw rawWorkflow
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	names := make([]string, 0, len(raw.Jobs))
	for name := range raw.Jobs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		job := raw.Jobs[name]
		for _, st := range job.Steps {
			agent, ok := actionAgent(st.Uses)
			if !ok {
				continue
			}
			wf := &Workflow{Path: rel, Env: map[string]string{}, With: st.With, Dispatchable: dispatchInput(&raw.On, "issue"), Commands: dispatchInput(&raw.On, "command"), Events: events(&raw.On), Agent: agent, RunName: raw.RunName,
				RunOf: runOf(&raw.On)}
			for _, env := range []map[string]string{raw.Env, job.Env, st.Env} {
				for k, v := range env {
					wf.Env[k] = v
				}
			}
			wf.Permissions = permissions(&raw.Permissions)
			if job.Permissions.Kind != 0 {
				wf.Permissions = permissions(&job.Permissions)
			}
			if wf.With == nil {
				wf.With = map[string]string{}
			}
			return wf, nil
		}
	}
	return nil, nil
}

// dispatchInput says whether on: has workflow_dispatch with the input name.
func dispatchInput(on *yaml.Node, name string) bool {
	var events map[string]yaml.Node
	if on.Decode(&events) != nil {
		return false
	}
	d, ok := events["workflow_dispatch"]
	if !ok {
		return false
	}
	var spec struct {
		Inputs map[string]yaml.Node `yaml:"inputs"`
	}
	if d.Decode(&spec) != nil {
		return false
	}
	_, ok = spec.Inputs[name]
	return ok
}

// runOf lists the workflows on: workflow_run: workflows: names.
func runOf(on *yaml.Node) []string {
	var events map[string]yaml.Node
	if on.Decode(&events) != nil {
		return nil
	}
	run, ok := events["workflow_run"]
	if !ok {
		return nil
	}
	var spec struct {
		Workflows []string `yaml:"workflows"`
	}
	if run.Decode(&spec) != nil {
		return nil
	}
	return spec.Workflows
}

// events lists the events of on:, which may be one name, a list of names, or a map of them.
func events(on *yaml.Node) []string {
	var out []string
	switch on.Kind {
	case yaml.ScalarNode:
		out = []string{on.Value}
	case yaml.SequenceNode:
		_ = on.Decode(&out)
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			out = append(out, on.Content[i].Value)
		}
	}
	sort.Strings(out)
	return out
}

func permissions(n *yaml.Node) map[string]string {
	switch n.Kind {
	case 0:
		return nil
	case yaml.ScalarNode:
		level := map[string]string{"write-all": "write", "read-all": "read"}[n.Value]
		m := map[string]string{}
		for _, s := range append(slices.Clone(Scopes), ReadScopes...) {
			m[s] = level
		}
		return m
	}
	m := map[string]string{}
	_ = n.Decode(&m)
	return m
}

// Token is the expression the workflow passes as ralph's token: the Actions token when it passes none.
func (w *Workflow) Token() string {
	if t := strings.TrimSpace(w.With["token"]); t != "" {
		return t
	}
	return "${{ github.token }}"
}

// ActionsToken says whether ralph runs with the Actions token (GITHUB_TOKEN), which opens pull requests
// that start no workflows.
func (w *Workflow) ActionsToken() bool {
	t := strings.ReplaceAll(w.Token(), " ", "")
	return t == "${{github.token}}" || t == "${{secrets.GITHUB_TOKEN}}"
}

var secretRef = regexp.MustCompile(`secrets\.([A-Za-z_][A-Za-z0-9_]*)`)

// SecretOf is the secret an expression reads ("" when it reads none, or the Actions token).
func SecretOf(expr string) string {
	m := secretRef.FindStringSubmatch(expr)
	if m == nil || m[1] == "GITHUB_TOKEN" {
		return ""
	}
	return m[1]
}

// File is the workflow's file name, as the Actions API takes it.
func (w *Workflow) File() string { return path.Base(w.Path) }

// WorkflowFile checks the workflow that runs ralph, as it is in the checkout: that it exists, that the
// chain can dispatch it, that the Actions token gets the permissions ralph needs, and that it gives ralph's
// step what agent.env passes through and the project token a board needs.
func WorkflowFile(wf *Workflow, cfg config.Config) []Finding {
	if wf == nil {
		return []Finding{problem("no workflow in .github/workflows uses "+agent.ActionRef, "run gh ralph init, which writes .github/workflows/ralph.yml, then commit and push it")}
	}
	var fs []Finding
	chain := wf.Chain
	switch {
	case cfg.Chain && wf.ChainProblem != "":
		fs = append(fs, problem(wf.ChainProblem+", so ralph cannot start its next step (chain: true)",
			"name a workflow file of .github/workflows whose workflow_dispatch has an issue input (as gh ralph init writes ralph.yml), or remove workflow:"))
	case cfg.Chain && chain != nil && chain.Path != wf.Path:
		fs = append(fs, ok("%s runs ralph; the chain dispatches %s (workflow_dispatch with an issue input)", wf.Path, chain.Path))
	case wf.Dispatchable:
		fs = append(fs, ok("%s runs ralph and can be dispatched (workflow_dispatch with an issue input)", wf.Path))
	case cfg.Chain:
		fs = append(fs, problem(wf.Path+" has no workflow_dispatch trigger with an issue input, and no other workflow that runs ralph has one, so ralph cannot start its next step (chain: true)",
			"add on: workflow_dispatch: inputs: issue: {required: true} (as gh ralph init writes .github/workflows/ralph.yml), or set chain: false in "+config.DefaultPath))
	default:
		fs = append(fs, ok("%s runs ralph", wf.Path))
	}
	if chain == nil && wf.ChainProblem == "" && wf.Dispatchable {
		chain = wf
	}
	if chain != nil && cfg.Chain && !strings.Contains(chain.RunName, "'ralph #{0}'") {
		fs = append(fs, Finding{Warn: true, Msg: chain.Path + " does not title a run on an issue \"ralph #N\" (run-name), so a sweep cannot tell that an issue's run is queued and may start another that only finds it locked",
			Fix: "add the run-name line gh ralph init writes to " + chain.Path})
	}
	if chain != nil && cfg.Chain && !chain.Commands {
		fs = append(fs, Finding{Warn: true, Msg: chain.Path + "'s workflow_dispatch has no command input, so a person's command (approve, a review) whose run GitHub fails is not done again by the run that finishes it",
			Fix: "add on: workflow_dispatch: inputs: command: {required: false, default: advance} and pass it to ralph's step (command: ${{ inputs.command }}), as gh ralph init writes it"})
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
	fs = append(fs, workflowRunFindings(wf)...)
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
	name := cfg.Agent.Preset
	if _, ok := preset.Lookup(name); !ok || cfg.Agent.Command != "" || wf.Agent == name {
		return Finding{}, false
	}
	has := "no agent CLI"
	if wf.Agent != "" {
		has = "the CLI of " + wf.Agent + " only"
	}
	return problem(fmt.Sprintf("%s uses %s, whose image has %s, and agent.preset is %s", wf.Path, agent.ActionOf(wf.Agent), has, name),
		fmt.Sprintf("use %s@<the same version> in %s (its image holds the CLI of %s)", agent.ActionOf(name), wf.Path, name)), true
}

// workflowRunFindings warns of a workflow under on: workflow_run: workflows: that the repository does not
// have (init writes the placeholder CI): GitHub then never starts ralph when checks fail on its pull
// requests. Nothing is said when the repository's workflows were not read.
func workflowRunFindings(wf *Workflow) []Finding {
	if wf.Named == nil {
		return nil
	}
	var fs []Finding
	for _, name := range wf.RunOf {
		if slices.Contains(wf.Named, name) {
			continue
		}
		fix := "the repository has no other workflow: add your CI's workflow, or remove workflow_run: from " + wf.Path + " if your CI is another service (check_suite covers it)"
		if len(wf.Named) > 0 {
			quoted := make([]string, len(wf.Named))
			for i, n := range wf.Named {
				quoted[i] = strconv.Quote(n)
			}
			fix = fmt.Sprintf("put your CI workflow's name (its name:) under on: workflow_run: workflows: in %s; the repository's workflows are %s", wf.Path, strings.Join(quoted, ", "))
		}
		fs = append(fs, Finding{Warn: true, Msg: fmt.Sprintf("%s starts a fix round when the workflow %q completes (on: workflow_run: workflows:), but no workflow in .github/workflows is named %q: checks that fail on ralph's pull request do not reach ralph",
			wf.Path, name, name), Fix: fix})
	}
	return fs
}

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
