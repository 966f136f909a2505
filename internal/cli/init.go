package cli

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	presets "github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The files init writes: templates/workflow.yml, rendered for the agent, is examples/ralph.yml for
// claude (a test keeps them equal); the config is config.Reference, the README's reference.
//
//go:embed templates/workflow.yml
var templates embed.FS

// The template's own delimiters are [[ ]]: a workflow is full of ${{ }}.
var workflowTemplate = template.Must(template.New("workflow.yml").Delims("[[", "]]").ParseFS(templates, "templates/workflow.yml"))

// WorkflowPath is where init writes the workflow.
const WorkflowPath = ".github/workflows/ralph.yml"

// InitOptions are `gh ralph init`'s.
type InitOptions struct {
	Repo  string
	Force bool
	// Project also creates the state field on the board of the config's project: section (a config that
	// differs from init's is then kept, not an error: it is where the board is named).
	Project bool
	// Agent is the preset (one of preset.Names, or command); "" asks on a terminal, else keeps the
	// config's or takes claude. Command is agent.command.
	Agent, Command string
	// SetSecret sets the agent's API key as a repository secret with gh secret set (which asks for it on
	// a terminal, or reads it from standard input); on a terminal init asks first.
	SetSecret bool
	// Prompt: init may ask (standard input and output are terminals and no --agent was given).
	Prompt bool
	// Documents is where the documents go (documents:), "" asks on a terminal, else keeps the config's
	// or the default; AskDocuments: init may ask it (standard input and output are terminals).
	Documents    string
	AskDocuments bool
}

// NewCmdInit builds `gh ralph init`.
func NewCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up ralph in this repository: the workflow, the config, the labels, the agent's secret",
		Long: `Write .github/workflows/ralph.yml (ralph's workflow: the ralph:build label, /ralph comments,
its own workflow_dispatch chain, an hourly sweep and closed pull requests, one run at a time per
issue, least-privilege permissions) and .github/ralph.yml (every setting with its default and a
comment), create ralph's labels with their colours and descriptions, and check the repository's
Actions settings that ralph needs, saying what to change and where.

init asks which agent runs the steps (claude, codex, gemini, copilot, opencode, pi, or a command of
your own), or takes --agent. For a preset it passes the CLI's API key to the agent (agent.env and the
workflow's env), and offers to store it as a repository secret with gh secret set (--set-secret:
without asking).

init asks where the research, plan and review documents are committed: on the issue's branch, so
in the pull request (branch, the default), or on a branch of ralph's own beside it, linked from the
issue and the pull request (separate), or takes --documents.

init can be run again: a file that is already as init writes it, and a label that exists, are
left alone. A file you changed is not overwritten unless you pass --force. Commit and push the
two files yourself, then run gh ralph doctor.

With --project, init also creates the single-select field of the project board named in
.github/ralph.yml (project: owner, number, field) with the 11 workflow states as options; a field
that exists is left alone. gh's token needs the project scope: gh auth refresh -s project.`,
		Example: `  $ gh ralph init
  $ gh ralph init --agent codex --set-secret
  $ gh ralph init --agent command --agent-command "my-agent --yes"
  $ gh ralph init --force
  $ gh ralph init --project`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if opts.Agent != "" && !slices.Contains(presetNames(), opts.Agent) {
				return flagErrorf(cmd, "unknown agent %q for --agent; use one of: %s", opts.Agent, strings.Join(presetNames(), ", "))
			}
			if opts.Agent == "command" && strings.TrimSpace(opts.Command) == "" {
				return flagErrorf(cmd, "--agent command needs --agent-command, the shell command that runs your agent")
			}
			if opts.Documents != "" && !slices.Contains(documentModes, opts.Documents) {
				return flagErrorf(cmd, "unknown mode %q for --documents; use one of: %s", opts.Documents, strings.Join(documentModes, ", "))
			}
			opts.Prompt = opts.Agent == "" && f.StdinTTY && f.StdoutTTY
			opts.AskDocuments = opts.Documents == "" && f.StdinTTY && f.StdoutTTY
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return initRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Overwrite files that differ from what init writes")
	cmd.Flags().BoolVar(&opts.Project, "project", false, "Also create the state field on the config's project board")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "The `NAME` of the agent: "+presets.Join(presetNames(), "or")+" (default: ask, or the config's)")
	cmd.Flags().StringVar(&opts.Command, "agent-command", "", "With --agent command: the shell `COMMAND` that runs your agent")
	cmd.Flags().StringVar(&opts.Documents, "documents", "", "Where the documents are committed: `MODE` branch (in the pull request) or separate (on ralph's own branch) (default: ask, or the config's)")
	cmd.Flags().BoolVar(&opts.SetSecret, "set-secret", false, "Store the agent's API key as a repository secret (gh secret set) without asking")
	_ = cmd.RegisterFlagCompletionFunc("documents", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return documentModes, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("agent", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return presetNames(), cobra.ShellCompDirectiveNoFileComp
	})
	addRepoFlag(cmd)
	return cmd
}

// presetNames are the agents init offers: the presets, then command.
func presetNames() []string { return append(presets.Names(), "command") }

// Labels are ralph's labels as init creates them.
func Labels() []ghapi.Label {
	desc := map[workflow.State]string{
		workflow.Backlog:            "ralph: waiting for triage",
		workflow.ResearchNeeded:     "ralph: waiting for the research step",
		workflow.ResearchInProgress: "ralph: a run is researching",
		workflow.ReadyForPlan:       "ralph: waiting for the plan step",
		workflow.PlanInProgress:     "ralph: a run is planning",
		workflow.PlanInReview:       "ralph: the plan is being reviewed",
		workflow.InProgress:         "ralph: implementing, one phase per run",
		workflow.InReview:           "ralph: the pull request is open for review",
		workflow.Done:               "ralph: merged",
		workflow.HumanNeeded:        "ralph: stopped; a person is needed",
		workflow.Canceled:           "ralph: triage decided not to do it",
	}
	color := map[workflow.Kind]string{workflow.Waiting: "c5def5", workflow.Lock: "fbca04", workflow.Gate: "d93f0b", workflow.Terminal: "0e8a16"}
	labels := []ghapi.Label{{Name: workflow.LabelBuild, Color: "5319e7", Description: "ralph: enrolled; ralph works on this issue"}}
	for _, s := range workflow.States() {
		c := color[s.Kind()]
		switch s {
		case workflow.HumanNeeded:
			c = "b60205"
		case workflow.Canceled:
			c = "cccccc"
		}
		labels = append(labels, ghapi.Label{Name: s.Label(), Color: c, Description: desc[s]})
	}
	return append(labels, ghapi.Label{Name: workflow.LabelNeedsIteration, Color: "f9d0c4", Description: "ralph: the last plan was sent back"})
}

// initFile is one file init writes.
type initFile struct {
	path    string // relative to the checkout, slash-separated
	content []byte
}

// choice is the agent init sets up: for a preset, its first key variable is passed through.
func choice(preset, command string) config.AgentChoice {
	c := config.AgentChoice{Preset: preset, Command: command}
	if p, ok := presets.Lookup(preset); ok {
		c.Keys = p.KeyVars[:1]
	}
	return c
}

// choiceOf is the agent of an existing config, so that init run again writes the same files.
func choiceOf(cfg config.Config) config.AgentChoice {
	c := config.AgentChoice{Preset: cfg.Agent.Preset, Command: cfg.Agent.Command}
	p, _ := presets.Lookup(cfg.Agent.Preset)
	for _, v := range p.KeyVars {
		if _, ok := cfg.Agent.Env[v]; ok {
			c.Keys = append(c.Keys, v)
		}
	}
	return c
}

// renderWorkflow is ralph's workflow for the agent's keys, using ralph's action at action, with the
// repository's setup steps (toolchains.Steps) before ralph's step.
func renderWorkflow(keys []string, action string, setup ...string) []byte {
	var b bytes.Buffer
	if err := workflowTemplate.Execute(&b, map[string]any{"Keys": keys, "Action": action, "Setup": setup}); err != nil {
		panic(err) // embedded; a test renders it
	}
	return b.Bytes()
}

// actionRef is how the workflow names ralph's action for the preset (the one whose image holds that agent's
// CLI: agent.ActionOf): pinned to the commit this gh ralph was released from, with its version in a
// comment, or the major version tag for a build that does not know its commit.
func (f *Factory) actionRef(preset string) string {
	action := agent.ActionOf(preset)
	v := strings.TrimPrefix(f.Version, "v")
	if f.Commit != "" && len(f.Commit) == 40 && isRelease(v) {
		return action + "@" + f.Commit + " # v" + v
	}
	return action + "@v1"
}

func initRun(ctx context.Context, f *Factory, opts *InitOptions) error {
	root, err := f.checkout(ctx)
	if err != nil {
		return err
	}
	// Resolve the repository and token first: a failure then changes nothing.
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	existing, cfgErr := compose.LoadConfig(root, "")
	var cfg config.Config
	if opts.Project {
		if cfg, err = projectConfig(root); err != nil { // project.go
			return err
		}
	}
	// init writes only inside the checkout, and only regular files where it names them: a link there (a
	// file, .github, .github/workflows: a branch someone else wrote) is refused before anything is
	// written, and the root keeps every read and write inside the checkout whatever changes meanwhile.
	dir, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer dir.Close()
	ch := choice("claude", "")
	_, statErr := os.Stat(filepath.Join(root, config.DefaultPath))
	switch {
	case opts.Agent != "":
		ch = choice(opts.Agent, opts.Command)
	case opts.Prompt:
		if ch, err = askAgent(f); err != nil {
			return err
		}
	case statErr == nil && cfgErr == nil:
		ch = choiceOf(existing)
	default:
		// No terminal to ask on and no --agent: the default, said, so that no one is surprised by it.
		fmt.Fprintf(f.Stderr, "no terminal to ask which agent on: setting up claude (--agent claude|codex|gemini|command chooses)\n")
	}
	switch {
	case opts.Documents != "":
		ch.Documents = config.DocumentsMode(opts.Documents)
	case opts.AskDocuments:
		if ch.Documents, err = askDocuments(f); err != nil {
			return err
		}
	case statErr == nil && cfgErr == nil:
		ch.Documents = existing.Documents
	default:
		fmt.Fprintf(f.Stderr, "no terminal to ask where the documents go: keeping documents: %s, on the issue's branch and so in the pull request (--documents separate keeps them on ralph's own branch)\n", config.Default().Documents)
	}
	// A config of the person's own keeps its verify: init run again writes the same file.
	keepVerify := statErr == nil && cfgErr == nil
	if keepVerify {
		ch.Verify = existing.Verify
	}
	if ch.Preset == "command" {
		chosen := config.Default()
		chosen.Agent.Preset, chosen.Agent.Command = ch.Preset, ch.Command
		if w, ok := doctor.MachineCommand(chosen, f.Getenv("HOME")); ok {
			fmt.Fprintf(f.Stderr, "%s %s: %s\n", colorizer(f.ErrColor).warn("warning:"), w.Msg, w.Fix)
		}
	}
	tc, err := detectToolchains(dir)
	if err != nil {
		return err
	}
	if !keepVerify {
		ch.Verify = tc.Verify
	}
	for _, found := range tc.Found {
		fmt.Fprintf(f.Stderr, "  found %s: the workflow sets it up before ralph's step\n", found)
	}
	files := []initFile{{WorkflowPath, renderWorkflow(ch.Keys, f.actionRef(ch.Preset), tc.Steps...)}, {config.DefaultPath, config.Reference(ch)}}
	type plan struct {
		file   initFile
		action string // create, unchanged, overwrite, keep
	}
	var plans []plan
	for _, fl := range files {
		if err := noLinkOnTheWay(dir, fl.path); err != nil {
			return err
		}
	}
	for _, fl := range files {
		old, err := dir.ReadFile(filepath.FromSlash(fl.path))
		switch {
		case errors.Is(err, os.ErrNotExist):
			plans = append(plans, plan{fl, "create"})
		case err != nil:
			return err
		case bytes.Equal(old, fl.content):
			plans = append(plans, plan{fl, "unchanged"})
		case opts.Force:
			plans = append(plans, plan{fl, "overwrite"})
		default:
			// A person's own file (a verify edited, a workflow of their own) is theirs: init keeps it and
			// still sets up what is missing (the labels, the secret).
			plans = append(plans, plan{fl, "keep"})
		}
	}
	for _, p := range plans {
		if p.action == "keep" {
			fmt.Fprintf(f.Stderr, "  %s differs from what init writes; kept as it is (--force overwrites it; gh ralph doctor checks it)\n", p.file.path)
			continue
		}
		if p.action == "unchanged" {
			fmt.Fprintf(f.Stderr, "  %s is up to date\n", p.file.path)
			continue
		}
		rel := filepath.FromSlash(p.file.path)
		if err := dir.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return err
		}
		if err := dir.WriteFile(rel, p.file.content, 0o644); err != nil {
			return err
		}
		verb := "wrote"
		if p.action == "overwrite" {
			verb = "overwrote"
		}
		fmt.Fprintf(f.Stdout, "%s %s\n", verb, p.file.path)
	}
	have, err := s.gh.Labels(ctx)
	if err != nil {
		return fmt.Errorf("listing the labels of %s: %w", s.fullName(), err)
	}
	exists := map[string]bool{}
	for _, l := range have {
		exists[strings.ToLower(l.Name)] = true
	}
	created := 0
	for _, l := range Labels() {
		if exists[strings.ToLower(l.Name)] {
			continue
		}
		if err := s.gh.CreateLabel(ctx, l); err != nil {
			return fmt.Errorf("creating the label %s: %w", l.Name, err)
		}
		created++
		fmt.Fprintf(f.Stdout, "created label %s\n", l.Name)
	}
	if created == 0 {
		fmt.Fprintf(f.Stderr, "  all %d labels exist in %s\n", len(Labels()), s.fullName())
	}
	if opts.Project {
		if err := s.ensureBoardField(ctx, cfg); err != nil {
			return err
		}
	}
	secretDone, err := initSecret(ctx, f, s, opts, ch)
	if err != nil {
		return err
	}
	wf, err := doctor.ParseWorkflow(WorkflowPath, files[0].content)
	if err != nil {
		return err
	}
	if p, err := os.ReadFile(filepath.Join(root, WorkflowPath)); err == nil {
		if own, err := doctor.ParseWorkflow(WorkflowPath, p); err == nil && own != nil {
			wf = own
		}
	}
	var todo []string
	for _, fd := range doctor.Problems(doctor.Settings(ctx, s.gh, wf)) {
		todo = append(todo, fd.Msg+": "+fd.Fix)
	}
	if access, err := s.gh.Access(ctx); err == nil {
		written, _ := config.Parse(config.DefaultPath, []byte(config.Reference(ch)))
		if fd, ok := doctor.Registries(access.Private, written); ok {
			todo = append(todo, fd.Msg+": "+fd.Fix)
		}
	}
	fmt.Fprintln(f.Stderr, "next:")
	step := 0
	say := func(format string, args ...any) {
		step++
		fmt.Fprintf(f.Stderr, "  %d. %s\n", step, fmt.Sprintf(format, args...))
	}
	say("commit and push the two files: git add %s %s && git commit -m \"Set up ralph\" && git push", WorkflowPath, config.DefaultPath)
	if len(ch.Keys) > 0 && !secretDone {
		say("store the agent's API key as a repository secret: gh secret set %s", ch.Keys[0])
	}
	for _, t := range todo {
		say("%s", t)
	}
	say("check the setup: gh ralph doctor")
	say("add the %s label to an issue (or gh ralph enroll N); gh ralph status shows where it is", workflow.LabelBuild)
	return nil
}

// documentModes are documents:'s values.
var documentModes = []string{string(config.DocumentsBranch), string(config.DocumentsSeparate)}

// askDocuments asks where the documents are committed.
func askDocuments(f *Factory) (config.DocumentsMode, error) {
	in := f.stdin()
	for {
		fmt.Fprintf(f.Stderr, "? Where are the research, plan and reviews committed: branch (on the issue's branch, so in the pull request) or separate (on ralph's own branch, linked from the issue and the pull request)? (%s) ", config.Default().Documents)
		answer, err := readLine(in)
		if err != nil {
			return "", err
		}
		mode := strings.ToLower(strings.TrimSpace(answer))
		if mode == "" {
			return config.Default().Documents, nil
		}
		if slices.Contains(documentModes, mode) {
			return config.DocumentsMode(mode), nil
		}
		fmt.Fprintf(f.Stderr, "unknown answer %q: answer branch or separate\n", mode)
	}
}

// askAgent asks which agent runs the steps.
func askAgent(f *Factory) (config.AgentChoice, error) {
	in := f.stdin()
	var preset string
	for {
		fmt.Fprintf(f.Stderr, "? Which agent runs the steps: %s (your own program)? (claude) ", presets.Join(presetNames(), "or"))
		answer, err := readLine(in)
		if err != nil {
			return config.AgentChoice{}, err
		}
		preset = strings.ToLower(strings.TrimSpace(answer))
		if preset == "" {
			preset = "claude"
		}
		if slices.Contains(presetNames(), preset) {
			break
		}
		// A typo is asked again (an answer at the end of the input is empty: the default).
		fmt.Fprintf(f.Stderr, "unknown agent %q: answer %s\n", preset, presets.Join(presetNames(), "or"))
	}
	var err error
	command := ""
	if preset == "command" {
		fmt.Fprint(f.Stderr, "? The shell command that runs your agent (it reads the prompt on standard input): ")
		if command, err = readLine(in); err != nil {
			return config.AgentChoice{}, err
		}
		if command = strings.TrimSpace(command); command == "" {
			return config.AgentChoice{}, errors.New("the agent command is empty: pass --agent command --agent-command \"my-agent --yes\"")
		}
	}
	return choice(preset, command), nil
}

// initSecret stores the agent's key as a repository secret with gh secret set, when the user agrees (or
// passed --set-secret) and the repository has no such secret yet; it says whether the secret is there.
func initSecret(ctx context.Context, f *Factory, s *session, opts *InitOptions, ch config.AgentChoice) (bool, error) {
	if len(ch.Keys) == 0 {
		return true, nil
	}
	name := ch.Keys[0]
	names, err := s.gh.SecretNames(ctx)
	if err == nil && slices.Contains(names, name) {
		fmt.Fprintf(f.Stderr, "  the secret %s is set in %s (gh secret set %s replaces it)\n", name, s.fullName(), name)
		return true, nil
	}
	set := opts.SetSecret
	if !set && opts.Prompt {
		fmt.Fprintf(f.Stderr, "? Store the agent's API key as the repository secret %s now, with gh secret set? (Y/n) ", name)
		answer, err := readLine(f.stdin())
		if err != nil {
			return false, err
		}
		a := strings.ToLower(strings.TrimSpace(answer))
		set = a == "" || a == "y" || a == "yes"
	}
	if !set {
		return false, nil
	}
	repo := s.host + "/" + s.fullName()
	fmt.Fprintf(f.Stderr, "  storing the repository secret %s: paste the agent's API key when gh asks\n", name)
	if err := f.runGH(ctx, "secret", "set", name, "--repo", repo); err != nil {
		return false, fmt.Errorf("gh secret set %s --repo %s: %w (run it yourself to store the key)", name, repo, err)
	}
	return true, nil
}

// readLine reads one line of an answer; end of input is an empty answer.
func readLine(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for {
		n, err := r.Read(one)
		if n > 0 {
			if one[0] == '\n' {
				return string(b), nil
			}
			b = append(b, one[0])
		}
		if errors.Is(err, io.EOF) {
			return string(b), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// noLinkOnTheWay refuses a symbolic link at rel or at any directory on the way to it, in dir.
func noLinkOnTheWay(dir *os.Root, rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := dir.Lstat(filepath.FromSlash(p))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s in your checkout is a symbolic link; init writes %s only as a file of its own, through no link; nothing was changed", p, rel)
		}
	}
	return nil
}
