package doctor

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"gopkg.in/yaml.v3"
)

// actionAgent is the agent of the image a step's uses: names, and whether it names ralph's action at all.
func actionAgent(uses string) (string, bool) {
	name, _, ok := strings.Cut(uses, "@")
	if !ok {
		return "", false
	}
	for _, a := range agent.ImageAgents {
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
	var files []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", pattern))
		files = append(files, m...)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
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

type rawWorkflow struct {
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
			wf := &Workflow{Path: rel, Env: map[string]string{}, With: st.With, Dispatchable: dispatchable(&raw.On), Events: events(&raw.On), Agent: agent}
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

func dispatchable(on *yaml.Node) bool {
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
	_, ok = spec.Inputs["issue"]
	return ok
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
